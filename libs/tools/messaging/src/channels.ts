import { ToolError } from '@toolgate/contracts';

/** The team-wide channels every principal of a tenant reads and writes. */
export const BROADCAST_CHANNELS = ['log', 'task', 'review', 'control'] as const;
export type BroadcastChannel = (typeof BROADCAST_CHANNELS)[number];

/** Principal ids as the principals file allows them (letters, digits, `.`, `_`, `-`). */
export const PRINCIPAL_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A channel name, checked: a broadcast channel, or `task:<principal>` (that principal's inbox). */
export type Channel =
  | { readonly kind: 'broadcast'; readonly name: BroadcastChannel }
  | { readonly kind: 'inbox'; readonly name: `task:${string}`; readonly owner: string };

const CHANNEL_HELP = 'use log, task, review, control, or task:<principal> for one principal\'s task inbox';

/** Parses a channel argument, or throws a `ToolError` saying which channels exist. */
export function parseChannel(value: unknown): Channel {
  if (typeof value !== 'string' || value.length === 0) throw new ToolError(`the channel is missing: ${CHANNEL_HELP}`, 'INVALID_CHANNEL');
  if ((BROADCAST_CHANNELS as readonly string[]).includes(value)) return { kind: 'broadcast', name: value as BroadcastChannel };
  if (value.startsWith('task:')) {
    const owner = value.slice('task:'.length);
    if (!PRINCIPAL_ID.test(owner)) {
      throw new ToolError(
        `'${shown(value)}' does not name a principal: after 'task:' give a principal id (letters, digits, '.', '_' or '-')`,
        'INVALID_CHANNEL',
      );
    }
    return { kind: 'inbox', name: `task:${owner}`, owner };
  }
  throw new ToolError(`unknown channel '${shown(value)}': ${CHANNEL_HELP}`, 'INVALID_CHANNEL');
}

/** A caller's value echoed in a message, cut so an error never balloons. */
export function shown(value: string): string {
  const printable = value.replace(/\p{Cc}/gu, '?');
  return printable.length > 64 ? `${printable.slice(0, 64)}…` : printable;
}
