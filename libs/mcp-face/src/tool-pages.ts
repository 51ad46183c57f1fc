import type { ToolManifest } from '@toolgate/contracts';

/** How many tools one `tools/list` page holds unless configured otherwise. */
export const DEFAULT_PAGE_SIZE = 100;

/** The longest cursor accepted; a real one is a base64url tool name (names are short). */
const MAX_CURSOR_LENGTH = 512;

/** A cursor that this server did not issue, or that was altered. */
export class InvalidCursorError extends Error {}

export interface ToolPage {
  readonly tools: readonly ToolManifest[];
  readonly nextCursor?: string;
}

function encodeCursor(lastName: string): string {
  return Buffer.from(JSON.stringify({ after: lastName }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw new InvalidCursorError('the cursor is not one this server issued');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('the cursor is not one this server issued');
  }
  const after = (decoded as { after?: unknown } | null)?.after;
  if (typeof after !== 'string' || after.length === 0) throw new InvalidCursorError('the cursor is not one this server issued');
  return after;
}

/**
 * One page of the tools a principal sees, in name order. The cursor names the last tool of the
 * previous page rather than an offset, so a tool added or removed between two pages neither
 * repeats nor skips any other tool.
 */
export function pageOfTools(tools: readonly ToolManifest[], cursor: string | undefined, pageSize: number): ToolPage {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rest = after === undefined ? sorted : sorted.filter((t) => t.name > after);
  const page = rest.slice(0, pageSize);
  const last = page.at(-1);
  return rest.length > pageSize && last ? { tools: page, nextCursor: encodeCursor(last.name) } : { tools: page };
}
