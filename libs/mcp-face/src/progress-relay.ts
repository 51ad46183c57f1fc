import type { ProgressUpdate } from '@toolgate/contracts';

/** What MCP allows as a progress token: a string or an integer. */
function isProgressToken(value: unknown): value is string | number {
  return (typeof value === 'string' && value.length <= 256) || (typeof value === 'number' && Number.isSafeInteger(value));
}

/**
 * The progress sink of a `tools/call` whose client sent `_meta.progressToken`: each update the
 * gateway relays (already rate-limited and flattened) becomes a `notifications/progress` on the
 * request's own stream. Nothing when the client sent no token (or an invalid one): it then gets
 * no progress at all, as MCP requires.
 */
export function progressOf(
  meta: unknown,
  notify: (notification: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>,
): { progress?: (update: ProgressUpdate) => void } {
  const token = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['progressToken'] : undefined;
  if (!isProgressToken(token)) return {};
  return {
    progress: (update) => {
      const params: Record<string, unknown> = { progressToken: token, progress: update.progress };
      if (update.total !== undefined) params['total'] = update.total;
      if (update.message !== undefined) params['message'] = update.message;
      // A stream that is gone cannot take it; the call goes on regardless.
      notify({ method: 'notifications/progress', params }).catch(() => undefined);
    },
  };
}
