/** Longest version pinned: the audit keeps 128 characters of one, and a call has to name it. */
export const MAX_PINNED_VERSION_CHARS = 64;

// SemVer 2.0.0's own grammar (semver.org): numeric identifiers without leading zeros, non-empty
// dot-separated pre-release and build identifiers. Run only on text within the bound above.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
// Up to three dot-separated numbers at the start, after an optional `v`; 15 digits at most each,
// so a number never needs more than a double to stay exact.
const LEADING_NUMBERS = /^[vV]?(\d{1,15})(?:\.(\d{1,15}))?(?:\.(\d{1,15}))?(?!\d)/;

/**
 * The version a server's tools are pinned at, derived from what the server reported in its
 * handshake so that the registry's semver rule always accepts it and a new server release still
 * changes it:
 * - a SemVer 2.0.0 version within {@link MAX_PINNED_VERSION_CHARS}: as it is;
 * - otherwise the leading numbers (after an optional `v`), padded to three (`0.8.x` → `0.8.0`,
 *   `v1.2` → `1.2.0`, leading zeros dropped), with the reported text as build metadata
 *   (`0.8.0+0.8.x`);
 * - `0.0.0+<text>` when no number leads, and `0.0.0` when nothing (or no text) is reported.
 * Build metadata is the text with every character outside `[0-9A-Za-z-.]` as `-`, empty
 * identifiers dropped, cut to fit the bound; it is left out when nothing of it is left.
 */
export function pinVersion(reported: unknown): string {
  if (typeof reported !== 'string') return '0.0.0';
  const text = reported.trim();
  if (text === '') return '0.0.0';
  if (text.length <= MAX_PINNED_VERSION_CHARS && SEMVER.test(text)) return text;
  const numbers = LEADING_NUMBERS.exec(text);
  const core = numbers ? [numbers[1], numbers[2], numbers[3]].map((n) => String(Number(n ?? '0'))).join('.') : '0.0.0';
  const build = buildMetadata(text, MAX_PINNED_VERSION_CHARS - core.length - 1);
  return build === '' ? core : `${core}+${build}`;
}

/** `text` as dot-separated non-empty `[0-9A-Za-z-]` identifiers, at most `max` characters in all. */
function buildMetadata(text: string, max: number): string {
  // Only the first characters can be kept; sanitising all of an overlong text would be wasted.
  const head = text.slice(0, max * 2).replace(/[^0-9A-Za-z.-]+/g, '-');
  const identifiers = head.split('.').filter((part) => part !== '');
  let out = '';
  for (const part of identifiers) {
    const room = max - out.length - (out === '' ? 0 : 1);
    if (room <= 0) break;
    out += (out === '' ? '' : '.') + part.slice(0, room);
  }
  return out;
}
