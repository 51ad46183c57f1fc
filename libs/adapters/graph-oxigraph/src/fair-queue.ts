import { ToolError } from '@toolgate/contracts';

/** How much a {@link FairQueue} holds and lets run. */
export interface FairQueueBounds {
  /** Items of one key that may run at the same time; the key's next items wait. */
  readonly maxRunningPerKey: number;
  /** Items of one key that may wait; one more is refused with reason `QUERY_RATE_LIMITED`. */
  readonly maxQueuedPerKey: number;
  /** Items of all keys together that may wait; one more is refused with reason `QUERY_RATE_LIMITED`. */
  readonly maxQueued: number;
}

interface Lane<T> {
  readonly waiting: T[];
  running: number;
}

/**
 * Per-key FIFO queues served round-robin: each {@link next} takes the head of the first key in the
 * rotation that has an item waiting and fewer than `maxRunningPerKey` running. A key moves to the
 * back of the rotation when it joins, when one of its items starts and when one ends, so a key
 * only ever moves behind a waiting key, never ahead of it: while a key may start an item, every
 * other key starts at most one before it, however many items those keys have queued. Both queue
 * bounds refuse at once rather than hold memory for a key that floods.
 */
export class FairQueue<T> {
  readonly #bounds: FairQueueBounds;
  /** The rotation: a Map iterates in insertion order, and a served key is re-inserted at the end. */
  readonly #lanes = new Map<string, Lane<T>>();
  #queued = 0;

  constructor(bounds: FairQueueBounds) {
    this.#bounds = bounds;
  }

  /** Items waiting, of all keys. */
  get queued(): number {
    return this.#queued;
  }

  /** Items of `key` waiting and running. */
  count(key: string): { readonly waiting: number; readonly running: number } {
    const lane = this.#lanes.get(key);
    return { waiting: lane?.waiting.length ?? 0, running: lane?.running ?? 0 };
  }

  /** Queues an item behind its key's earlier ones; throws a `QUERY_RATE_LIMITED` ToolError when a bound is reached. */
  enqueue(key: string, item: T): void {
    const lane = this.#lanes.get(key);
    const waiting = lane?.waiting.length ?? 0;
    if (waiting >= this.#bounds.maxQueuedPerKey) {
      throw new ToolError(
        `too many queries are waiting: this tenant already has ${waiting} queued; wait for their answers before sending more`,
        'QUERY_RATE_LIMITED',
      );
    }
    if (this.#queued >= this.#bounds.maxQueued) {
      throw new ToolError(`the knowledge graph has ${this.#queued} queries waiting; try again in a few seconds`, 'QUERY_RATE_LIMITED');
    }
    if (lane) lane.waiting.push(item);
    else this.#lanes.set(key, { waiting: [item], running: 0 });
    this.#queued++;
  }

  /** Takes the next item to run, marking it running under its key; undefined when none may start. */
  next(): { readonly key: string; readonly item: T } | undefined {
    for (const [key, lane] of this.#lanes) {
      if (lane.waiting.length === 0 || lane.running >= this.#bounds.maxRunningPerKey) continue;
      const item = lane.waiting.shift() as T;
      lane.running++;
      this.#queued--;
      this.#lanes.delete(key);
      this.#lanes.set(key, lane);
      return { key, item };
    }
    return undefined;
  }

  /** Records that an item of `key` taken by {@link next} stopped running. */
  done(key: string): void {
    const lane = this.#lanes.get(key);
    if (!lane || lane.running === 0) throw new Error(`no item of this key is running`);
    lane.running--;
    this.#lanes.delete(key);
    // A key with nothing left leaves the rotation, so the map holds only keys with work; one that
    // goes on waits behind the keys that waited while its item ran.
    if (lane.running > 0 || lane.waiting.length > 0) this.#lanes.set(key, lane);
  }

  /** Removes and returns every waiting item (running ones stay counted until {@link done}). */
  drain(): T[] {
    const items: T[] = [];
    for (const [key, lane] of this.#lanes) {
      items.push(...lane.waiting.splice(0));
      if (lane.running === 0) this.#lanes.delete(key);
    }
    this.#queued = 0;
    return items;
  }
}
