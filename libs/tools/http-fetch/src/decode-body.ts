/** How a response body is presented to the agent. */
export interface DecodedBody {
  readonly kind: 'text' | 'binary' | 'empty';
  /** Decoded text; empty for binary and empty bodies. */
  readonly text: string;
  /** The encoding actually used (WHATWG name, e.g. `utf-8`, `windows-1252`, `shift_jis`). */
  readonly charset?: string;
  readonly notes: string[];
}

/** A parsed `content-type`: lower-case `type/subtype` and its parameters. */
export interface MediaType {
  readonly essence: string;
  readonly params: Readonly<Record<string, string>>;
}

const TEXT_ESSENCES = new Set([
  'application/json',
  'application/ld+json',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/x-www-form-urlencoded',
  'application/x-ndjson',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/csv',
  'application/x-sh',
  'application/x-httpd-php',
  'message/rfc822',
]);

export function parseMediaType(header: string | undefined): MediaType | undefined {
  if (!header) return undefined;
  const [type, ...rest] = header.split(';');
  const essence = type?.trim().toLowerCase() ?? '';
  if (!/^[\w.+-]+\/[\w.+-]+$/.test(essence)) return undefined;
  const params: Record<string, string> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (name && !(name in params)) params[name] = value;
  }
  return { essence, params };
}

/** Whether a media type is text an agent can read (text/*, JSON, XML, scripts, …). */
export function isTextual(media: MediaType): boolean {
  return (
    media.essence.startsWith('text/') ||
    TEXT_ESSENCES.has(media.essence) ||
    media.essence.endsWith('+json') ||
    media.essence.endsWith('+xml')
  );
}

/**
 * Decodes a (possibly truncated) body for the agent. Text is decoded by, in order: a byte-order
 * mark, the `charset` of the content type, a `<meta charset>` or XML declaration near the start,
 * and UTF-8. An unknown charset is decoded as UTF-8 with a note saying so. Binary content is not
 * returned at all — base64 would cost the agent's context a third more than the bytes and it
 * cannot read them — only its type and size. Without a content type, bytes that are valid UTF-8
 * and contain no NUL are text.
 */
export function decodeBody(bytes: Uint8Array, contentType: string | undefined, truncated: boolean): DecodedBody {
  if (bytes.length === 0) return { kind: 'empty', text: '', notes: [] };
  const media = parseMediaType(contentType);
  const textual = media ? isTextual(media) : looksLikeText(bytes);
  if (!textual) {
    const what = media ? media.essence : 'unknown type';
    return {
      kind: 'binary',
      text: '',
      notes: [`binary content (${what}), ${bytes.length}${truncated ? '+' : ''} bytes, not included`],
    };
  }

  const notes: string[] = [];
  const bom = sniffBom(bytes);
  let label = bom ?? media?.params['charset'] ?? sniffDeclaredCharset(bytes, media?.essence) ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    notes.push(`unknown charset '${label.slice(0, 40)}'; decoded as UTF-8`);
    label = 'utf-8';
    decoder = new TextDecoder('utf-8');
  }
  // `stream: true` holds back a multi-byte character cut by the byte cap instead of emitting U+FFFD.
  let text = decoder.decode(bytes, { stream: truncated });
  if (decoder.encoding === 'windows-1252') text = fixWindows1252(text);
  return { kind: 'text', text, charset: decoder.encoding, notes };
}

/** WHATWG windows-1252 for bytes 0x80–0x9F (the five unassigned bytes stay C1 controls). */
const WINDOWS_1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Node 20's TextDecoder takes a Latin-1 fast path for `windows-1252` (and its aliases `latin1`,
 * `iso-8859-1`, `ascii`) and returns C1 controls for 0x80–0x9F, where the Encoding Standard
 * says curly quotes, dashes, € and so on. Pages labelled Latin-1 use those bytes constantly.
 */
function fixWindows1252(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]!);
}

function sniffBom(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** `<meta charset="…">`, `<meta http-equiv … content="…; charset=…">` or `<?xml encoding="…"?>` in the first KiB. */
function sniffDeclaredCharset(bytes: Uint8Array, essence: string | undefined): string | undefined {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  if (essence === undefined || essence === 'text/html' || essence === 'application/xhtml+xml') {
    const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head);
    if (meta?.[1]) return meta[1];
  }
  const xml = /^\s*<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)["']/i.exec(head);
  return xml?.[1];
}

function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 4096);
  if (sample.includes(0)) return false;
  try {
    // A cut multi-byte sequence at the end of the sample is not evidence of binary.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}
