import type { BusMessage, MessageBus } from '@toolgate/contracts';
import { checkBusMessage, checkBusRead, publishedMessage } from '@toolgate/adapter-kit-store';

/** One tenant's bus: its messages by channel (each list in seq order) and its readers' cursors. */
interface TenantBus {
  readonly channels: Map<string, BusMessage[]>;
  /** `reader\0channel` → seq of the last message returned to that reader on that channel. */
  readonly cursors: Map<string, number>;
}

/**
 * The message bus in a map, for tests and single-process demos: nothing survives a restart.
 * Cursors are kept per reader and channel, so a channel-filtered read never skips messages of
 * other channels. Every method runs synchronously to completion, which makes a read and its
 * cursor move atomic.
 */
export class MemoryMessageBus implements MessageBus {
  readonly #tenants = new Map<string, TenantBus>();
  #seq = 0;

  async publish(message: Omit<BusMessage, 'seq'>): Promise<BusMessage> {
    checkBusMessage(message);
    const stored = publishedMessage(message, ++this.#seq);
    const bus = this.#tenant(message.tenant);
    let list = bus.channels.get(message.channel);
    if (!list) {
      list = [];
      bus.channels.set(message.channel, list);
    }
    list.push(stored);
    return stored;
  }

  async readNew(
    tenant: string,
    reader: string,
    options: { readonly channels?: readonly string[]; readonly limit: number },
  ): Promise<readonly BusMessage[]> {
    checkBusRead(tenant, reader, options.limit);
    const bus = this.#tenants.get(tenant);
    if (!bus) return [];

    const channels = options.channels ?? [...bus.channels.keys()];
    // Each channel contributes at most `limit` unread messages; the oldest `limit` of the union win.
    const candidates: BusMessage[] = [];
    for (const channel of new Set(channels)) {
      const list = bus.channels.get(channel);
      if (!list) continue;
      const after = bus.cursors.get(cursorKey(reader, channel)) ?? 0;
      const start = firstAfter(list, after);
      candidates.push(...list.slice(start, start + options.limit));
    }
    const chosen = candidates.sort((a, b) => a.seq - b.seq).slice(0, options.limit);
    for (const message of chosen) bus.cursors.set(cursorKey(reader, message.channel), message.seq);
    return chosen;
  }

  #tenant(tenant: string): TenantBus {
    let bus = this.#tenants.get(tenant);
    if (!bus) {
      bus = { channels: new Map(), cursors: new Map() };
      this.#tenants.set(tenant, bus);
    }
    return bus;
  }
}

function cursorKey(reader: string, channel: string): string {
  return `${reader}\u0000${channel}`;
}

/** Index of the first message with `seq > after` (binary search: the list is in seq order). */
function firstAfter(list: readonly BusMessage[], after: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
