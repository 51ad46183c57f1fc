import { token, type Token } from './token.js';

/**
 * The accepted definition of one tool: its digest, and the canonical JSON it was taken of (so a
 * change can be shown beside what was accepted). The gateway serves a source's tool only while
 * the digest of what the source declares now equals its pin.
 */
export interface ToolPin {
  /**
   * The tool's registry name, e.g. `files__read_file`: 1 to 128 characters, each an ASCII letter,
   * digit, `_`, `-` or `.` (so every store lists pins in the same byte order).
   */
  readonly tool: string;
  /** The tool's provenance when it was pinned (`mcp:<server>`, or `first-party`). */
  readonly provenance: string;
  /** `sha256:` and 64 lowercase hex digits, of `definition`'s UTF-8 bytes. */
  readonly digest: string;
  /**
   * The pinned definition as canonical JSON (a JSON object, keys sorted by UTF-16 code units, no
   * whitespace, as the gateway's `canonicalJson` writes it), at most 256 KiB of UTF-8 and nested
   * at most 128 levels.
   */
  readonly definition: string;
  /** Epoch ms of the pin: a non-negative integer. */
  readonly pinnedAt: number;
  /**
   * `first-seen` for a pin recorded on first sight, else the id of the principal who accepted it
   * (1 to 256 characters, no control characters).
   */
  readonly pinnedBy: string;
}

/**
 * Tool definitions pinned against change ("rug pulls"). Pins are global, not per tenant: a
 * source's tools are the same for every tenant. Both writes are atomic check-and-sets, so two
 * server processes sharing the store agree on one pin.
 *
 * Every store refuses the same pins: a write whose pin breaks a rule of {@link ToolPin} (a digest
 * that is not the digest of its definition included) rejects with a `TypeError` naming the field,
 * without echoing the value, and stores nothing. Pins are returned as fresh copies holding only
 * the port's fields.
 */
export interface ToolPinStore {
  /** Every pin, in tool-name order (byte order, the same in every store). */
  list(): Promise<readonly ToolPin[]>;
  /** The pin of one tool, or undefined (also for a name no pin could have). */
  get(tool: string): Promise<ToolPin | undefined>;
  /**
   * Records `pin` only if the tool has none yet, and returns the pin in force afterwards: `pin`
   * itself, or the one another writer recorded first. Never changes an existing pin.
   */
  pinFirst(pin: ToolPin): Promise<ToolPin>;
  /**
   * Replaces the tool's pin with `pin` only if its digest is now `expectedDigest` (or the tool has
   * none and `expectedDigest` is undefined). Returns whether it did; false changes nothing. A
   * defined `expectedDigest` that is not a well-formed digest is refused like a bad pin.
   */
  replace(expectedDigest: string | undefined, pin: ToolPin): Promise<boolean>;
}
/** The pin store `apps/server` binds by `TOOLGATE_STORE` (SQLite or PostgreSQL). */
export const ToolPinStoreToken: Token<ToolPinStore> = token('ToolPinStore');
