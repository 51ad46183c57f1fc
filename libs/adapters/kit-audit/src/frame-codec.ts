// The one frame codec of both audit sinks (file and PostgreSQL): they write the same frame JSON
// and the same digest, so one specification (docs/audit-format.md) and one verifier cover both.
import { createHmac, hash } from 'node:crypto';
import { InvalidAuditEventError, redactSecrets, type AuditEvent, type AuditEventKind, type AuditRecord } from '@toolgate/contracts';

/** `prev` of the very first frame of a trail: 64 zeros. */
export const GENESIS_DIGEST = '0'.repeat(64);

/**
 * The kinds a v1 frame may carry. The approval kinds were added later (ADR 0020), `tool_accepted`
 * later still (ADR 0060); frames written before that never carry them, so every older trail still
 * verifies and reads.
 */
export const AUDIT_EVENT_KINDS: readonly AuditEventKind[] = [
  'authorized',
  'succeeded',
  'failed',
  'denied',
  'recovered',
  'approval_requested',
  'approval_decided',
  'tool_accepted',
];

/**
 * Every member a frame's JSON may hold, in the order the writer emits them. Members added later
 * go at the end, so the frame JSON (and digest) of an event without them is unchanged.
 */
export const FRAME_FIELDS = [
  'seq',
  'prev',
  'ts',
  'tenant',
  'principal',
  'tool',
  'version',
  'event',
  'gate',
  'code',
  'durationMs',
  'argsDigest',
  'approvedBy',
  'approvalReason',
  'repaired',
  'callId',
  'detail',
  'approvalId',
  'grants',
  'issuer',
] as const;

/** Optional string members of an event (all redacted and length-capped). */
const OPTIONAL_STRINGS = [
  'tenant',
  'principal',
  'tool',
  'version',
  'gate',
  'code',
  'argsDigest',
  'approvedBy',
  'approvalReason',
  'callId',
  'detail',
  'approvalId',
  'issuer',
] as const;

/** Largest frame JSON a writer produces; readers refuse anything above `MAX_FRAME_BYTES`. */
export const MAX_WRITTEN_FRAME_BYTES = 64 * 1024;
/** `<length:8 hex>:<digest:64 hex>:` */
export const FRAME_PREFIX_BYTES = 8 + 1 + 64 + 1;
/** Largest frame JSON a reader accepts (a length field above this is damage, not data). */
export const MAX_FRAME_BYTES = 1024 * 1024;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const HEX64 = /^[0-9a-f]{64}$/;
const TRUNCATED = '…[truncated]';

/** How frames are digested: plain SHA-256, or HMAC-SHA-256 under an operator's key. */
export type DigestAlgorithm = 'sha256' | 'hmac-sha256';

/** Computes frame digests (lowercase hex) for one trail. */
export interface FrameDigester {
  readonly algorithm: DigestAlgorithm;
  /** First 16 hex digits of HMAC-SHA-256(key, "toolgate-audit key id"); names the key without revealing it. */
  readonly keyId?: string;
  digest(json: Uint8Array): string;
  /** The same digest as a latin1 string of its 32 raw bytes (cheaper to compare in bulk). */
  raw(json: Uint8Array): string;
}

/** Minimum HMAC key length in bytes: shorter keys are guessable. */
export const MIN_HMAC_KEY_BYTES = 16;

/**
 * The digester for a trail: HMAC-SHA-256 when a key is given (a string is used as its UTF-8
 * bytes), plain SHA-256 otherwise.
 */
export function createFrameDigester(hmacKey?: string | Uint8Array): FrameDigester {
  if (hmacKey === undefined) {
    return { algorithm: 'sha256', digest: (json) => hash('sha256', json, 'hex'), raw: (json) => hash('sha256', json, 'binary') };
  }
  const key = typeof hmacKey === 'string' ? Buffer.from(hmacKey, 'utf8') : Buffer.from(hmacKey);
  if (key.length < MIN_HMAC_KEY_BYTES) {
    throw new RangeError(`the audit HMAC key must be at least ${MIN_HMAC_KEY_BYTES} bytes long (got ${key.length})`);
  }
  const keyId = createHmac('sha256', key).update('toolgate-audit key id').digest('hex').slice(0, 16);
  return {
    algorithm: 'hmac-sha256',
    keyId,
    digest: (json) => createHmac('sha256', key).update(json).digest('hex'),
    raw: (json) => createHmac('sha256', key).update(json).digest('binary'),
  };
}

interface Caps {
  readonly chars: number;
  /** Most entries kept of each string list (`repaired`, `grants`). */
  readonly repairs: number;
  readonly redact: boolean;
}
const NORMAL_CAPS: Caps = { chars: 2048, repairs: 32, redact: true };
// Small enough that even a frame of escaped control characters stays under MAX_WRITTEN_FRAME_BYTES.
const TIGHT_CAPS: Caps = { chars: 200, repairs: 8, redact: true };
// Reading back: check the shape only; what was written is returned as it is.
const AS_WRITTEN: Caps = { chars: Number.MAX_SAFE_INTEGER, repairs: Number.MAX_SAFE_INTEGER, redact: false };

/** The string-list members, with the word their overflow note uses. */
const STRING_LISTS = [
  ['repaired', 'repairs'],
  ['grants', 'grants'],
] as const;

function cap(text: string, caps: Caps): string {
  return text.length <= caps.chars ? text : text.slice(0, caps.chars) + TRUNCATED;
}

/** Redacts first, then caps, so a secret cut in half by the cap can never slip past the patterns. */
function clean(text: string, caps: Caps): string {
  return cap(caps.redact ? redactSecrets(text) : text, caps);
}

/**
 * Checks an event's shape at run time (callers may be plain JavaScript) and returns a copy that
 * holds only `AuditEvent` members, with every string redacted and length-capped. Anything else
 * on the object (raw arguments, say) is dropped, never written.
 */
export function normalizeEvent(event: AuditEvent, caps: Caps = NORMAL_CAPS): AuditEvent {
  if (typeof event !== 'object' || event === null) throw new InvalidAuditEventError('an audit event must be an object');
  const source = event as unknown as Record<string, unknown>;
  if (!AUDIT_EVENT_KINDS.includes(source['event'] as AuditEventKind)) {
    throw new InvalidAuditEventError(`audit event kind must be one of ${AUDIT_EVENT_KINDS.join(', ')}`);
  }
  const ts = source['ts'];
  if (typeof ts !== 'string' || !ISO_TIME.test(ts)) {
    throw new InvalidAuditEventError('audit event ts must be an ISO-8601 time, e.g. 2025-01-31T12:00:00.000Z');
  }
  const out: Record<string, unknown> = { event: source['event'], ts };
  for (const field of OPTIONAL_STRINGS) {
    const value = source[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new InvalidAuditEventError(`audit event ${field} must be a string`);
    out[field] = clean(value, caps);
  }
  const durationMs = source['durationMs'];
  if (durationMs !== undefined) {
    if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs < 0) {
      throw new InvalidAuditEventError('audit event durationMs must be a finite number >= 0');
    }
    out['durationMs'] = durationMs;
  }
  for (const [field, noun] of STRING_LISTS) {
    const list = source[field];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((r) => typeof r !== 'string')) {
      throw new InvalidAuditEventError(`audit event ${field} must be an array of strings`);
    }
    const kept = (list as string[]).slice(0, caps.repairs).map((r) => clean(r, caps));
    if (list.length > caps.repairs) kept.push(`${list.length - caps.repairs} more ${noun}${TRUNCATED}`);
    out[field] = kept;
  }
  return out as unknown as AuditEvent;
}

/**
 * The frame JSON of an event at `seq` after `prev`: members in `FRAME_FIELDS` order, absent
 * members omitted, no whitespace. It always begins with `{"seq":<seq>,"prev":"<prev>",`, which
 * is what lets a verifier check the chain without parsing the JSON.
 */
export function encodeFrameJson(seq: number, prev: string, event: AuditEvent): string {
  // Literal in FRAME_FIELDS order; JSON.stringify keeps insertion order and drops undefined.
  return JSON.stringify({
    seq,
    prev,
    ts: event.ts,
    tenant: event.tenant,
    principal: event.principal,
    tool: event.tool,
    version: event.version,
    event: event.event,
    gate: event.gate,
    code: event.code,
    durationMs: event.durationMs,
    argsDigest: event.argsDigest,
    approvedBy: event.approvedBy,
    approvalReason: event.approvalReason,
    repaired: event.repaired,
    callId: event.callId,
    detail: event.detail,
    approvalId: event.approvalId,
    grants: event.grants,
    issuer: event.issuer,
  });
}

/** A frame ready to be written. */
export interface EncodedFrame {
  readonly seq: number;
  readonly prev: string;
  readonly digest: string;
  /** The exact JSON text whose bytes were digested. */
  readonly json: string;
  /** `<length:8 hex>:<digest:64 hex>:<json>\n` */
  readonly line: Buffer;
}

/**
 * Normalizes `event` (see `normalizeEvent`) so that its frame is sure to fit in
 * `MAX_WRITTEN_FRAME_BYTES` at any seq: with tighter caps when the normal ones are not enough.
 */
export function prepareEvent(event: AuditEvent): AuditEvent {
  const normal = normalizeEvent(event);
  // Cheap bound first (a UTF-16 unit becomes at most 6 bytes of JSON); encode only when it might not fit.
  let bound = 512;
  for (const value of Object.values(normal)) {
    if (typeof value === 'string') bound += 6 * value.length + 24;
    else if (Array.isArray(value)) for (const r of value as string[]) bound += 6 * r.length + 4;
  }
  if (bound <= MAX_WRITTEN_FRAME_BYTES) return normal;
  const widest = Buffer.byteLength(encodeFrameJson(Number.MAX_SAFE_INTEGER, GENESIS_DIGEST, normal), 'utf8');
  return widest <= MAX_WRITTEN_FRAME_BYTES ? normal : normalizeEvent(event, TIGHT_CAPS);
}

/** Frames an event already passed through `prepareEvent` at `seq` after `prev`. */
export function encodePrepared(seq: number, prev: string, prepared: AuditEvent, digester: FrameDigester): EncodedFrame {
  const json = encodeFrameJson(seq, prev, prepared);
  const length = Buffer.byteLength(json, 'utf8');
  // One buffer for the whole line: the JSON goes in place, its digest is taken from there.
  const line = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + length + 1);
  line.write(json, FRAME_PREFIX_BYTES, length, 'utf8');
  const digest = digester.digest(line.subarray(FRAME_PREFIX_BYTES, FRAME_PREFIX_BYTES + length));
  line.write(`${length.toString(16).padStart(8, '0')}:${digest}:`, 0, FRAME_PREFIX_BYTES, 'latin1');
  line[FRAME_PREFIX_BYTES + length] = 0x0a;
  return { seq, prev, digest, json, line };
}

/** Validates, redacts and caps `event`, then frames it at `seq` after `prev`. */
export function encodeFrame(seq: number, prev: string, event: AuditEvent, digester: FrameDigester): EncodedFrame {
  return encodePrepared(seq, prev, prepareEvent(event), digester);
}

/** The exact text a frame's JSON must start with at `seq` after `prev`. */
export function chainPrefix(seq: number, prev: string): string {
  return `{"seq":${seq},"prev":"${prev}",`;
}

/**
 * Parses and checks one frame's JSON into a record. Throws a one-line reason (no data from the
 * frame) when the JSON is not a well-formed v1 record.
 */
export function decodeFrameJson(json: string, digest: string): AuditRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new InvalidAuditEventError('frame JSON does not parse');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidAuditEventError('frame JSON is not an object');
  }
  const record = parsed as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(FRAME_FIELDS as readonly string[]).includes(key)) throw new InvalidAuditEventError(`frame JSON has an unknown member "${key.slice(0, 40)}"`);
  }
  const seq = record['seq'];
  const prev = record['prev'];
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new InvalidAuditEventError('frame seq is not a positive integer');
  if (typeof prev !== 'string' || !HEX64.test(prev)) throw new InvalidAuditEventError('frame prev is not 64 lowercase hex digits');
  // A member repeated later in the text would make JSON.parse see another seq/prev than the
  // chain check (which reads the prefix): such a frame is malformed.
  if (!json.startsWith(chainPrefix(seq, prev))) throw new InvalidAuditEventError('frame JSON does not start with its seq and prev');
  let event: AuditEvent;
  try {
    event = normalizeEvent(record as unknown as AuditEvent, AS_WRITTEN);
  } catch (error) {
    throw new InvalidAuditEventError(`frame ${(error as Error).message}`);
  }
  // Normalizing again must be a no-op for what the writer wrote; anything else was not written by it.
  if (encodeFrameJson(seq, prev, event) !== json) throw new InvalidAuditEventError('frame JSON is not in canonical v1 form');
  return { ...event, seq, prev, digest } as AuditRecord;
}
