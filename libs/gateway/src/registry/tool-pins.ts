import { setImmediate } from 'node:timers';
import type { Clock, ToolPin, ToolPinStore } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';

/** How long after a failed first-seen pin the registry tries again (the tool stays unserved meanwhile). */
export const PIN_RETRY_MS = 1000;
/** How often a held tool's pin is re-read from the store at most (another server process may have accepted it). */
export const PIN_REFRESH_MS = 5000;
/** How long `load` waits for the store's list of pins: a store that never answers fails the start instead of hanging it. */
export const PIN_LOAD_TIMEOUT_MS = 30_000;

/**
 * Most first-seen pins the gateway records per provenance (per MCP server), counting the pins
 * it holds of that provenance, in number and in bytes of canonical definition (ADR 0069). A
 * server lists at most 256 tools whose declared definitions total at most 1 MiB (its discovery
 * budget), so the bounds leave room for four whole catalogues of new names and sixteen full
 * listings, while a server that keeps listing fresh names cannot grow the pin store without end.
 */
export const TOOL_PIN_BOUNDS = {
  /** Pins of one provenance. */
  pins: 1024,
  /** UTF-8 bytes of the canonical definitions pinned for one provenance. */
  bytes: 16 * 1024 * 1024,
} as const;

/** Bounds of the shape of `TOOL_PIN_BOUNDS`, for tests and operators that need other ones. */
export type ToolPinBounds = { readonly [K in keyof typeof TOOL_PIN_BOUNDS]: number };

/** What `pinFirst` did: the pin is being written (or is waiting to be retried), or the provenance's bound refused it. */
export type FirstSeenOutcome = 'pending' | 'over-bound';

/** Pins (and first-seen writes under way) of one provenance, in number and bytes. */
interface Usage {
  count: number;
  bytes: number;
}

/** A first-seen pin being written, or the last failure to write one. */
interface FirstSeen {
  readonly digest: string;
  readonly write?: Promise<void>;
  readonly failedAt?: number;
  /** What the write under way holds of its provenance's bound, released when it settles. */
  readonly reserved?: { readonly provenance: string; readonly bytes: number };
}

/**
 * The gateway's copy of the pin store: read once at start (`load`), then kept in memory so the
 * registry, which is synchronous and on every call's path, can decide from it, and written
 * through. A tool first seen is pinned in the background; until its pin is durable it is not
 * served (`pending`). Without a store, or before `load`, nothing pinned is served.
 */
export class ToolPins {
  readonly #store: ToolPinStore | undefined;
  readonly #clock: Clock;
  readonly #pins = new Map<string, ToolPin>();
  readonly #firstSeen = new Map<string, FirstSeen>();
  /** What each provenance's pins and first-seen writes under way take, against `TOOL_PIN_BOUNDS`. */
  readonly #usage = new Map<string, Usage>();
  readonly #refreshedAt = new Map<string, number>();
  /** When each tool was first seen held at a digest (`tool\0digest`), for the operator. */
  readonly #heldSince = new Map<string, number>();
  #loaded = false;
  #version = 0;
  /**
   * First-seen writes run one after another, each on a later turn of the event loop: a store
   * whose writes block (SQLite commits synchronously) must not stall every other caller while a
   * server's whole new tool list is pinned. A write that hangs holds the next for `waitMs` at most.
   */
  #writes: Promise<unknown> = Promise.resolve();

  readonly #waitMs: number;
  readonly #loadTimeoutMs: number;
  readonly #bounds: ToolPinBounds;

  /**
   * `waitMs`: how long `settle` waits for a first-seen pin (the gateway's `pinWaitMs`);
   * `loadTimeoutMs`: how long `load` waits; `bounds`: the first-seen pins allowed per provenance.
   */
  constructor(
    store: ToolPinStore | undefined,
    clock: Clock,
    waitMs = 5000,
    loadTimeoutMs = PIN_LOAD_TIMEOUT_MS,
    bounds: ToolPinBounds = TOOL_PIN_BOUNDS,
  ) {
    this.#store = store;
    this.#clock = clock;
    this.#waitMs = waitMs;
    this.#loadTimeoutMs = loadTimeoutMs;
    this.#bounds = bounds;
  }

  /** Bumped whenever a pin or a first-seen write changes, so the registry knows to look again. */
  get version(): number {
    return this.#version;
  }

  /** Whether `load` has read the store: until then nothing pinned is served. */
  get loaded(): boolean {
    return this.#loaded;
  }

  /**
   * Reads every pin from the store, replacing what is held in memory. Throws `GatewayError`
   * UNAVAILABLE when there is no store or it cannot be read (the message names no store detail).
   */
  async load(): Promise<void> {
    const store = this.#store;
    if (store === undefined) throw new GatewayError('UNAVAILABLE', 'The gateway has no tool pin store, so it serves no pinned tool.');
    let pins: readonly ToolPin[] | undefined;
    try {
      pins = await within(attempt(() => store.list()), this.#loadTimeoutMs);
    } catch {
      throw new GatewayError('UNAVAILABLE', 'The gateway could not read its tool pins (the pin store is unavailable).');
    }
    if (pins === undefined) throw new GatewayError('UNAVAILABLE', `The gateway could not read its tool pins (the pin store did not answer within ${this.#loadTimeoutMs} ms).`);
    if (!Array.isArray(pins)) throw new GatewayError('UNAVAILABLE', 'The gateway could not read its tool pins (the pin store answered without a list).');
    this.#pins.clear();
    this.#usage.clear();
    for (const pin of pins) if (isPin(pin, pin?.tool)) this.#setPin(pin);
    // First-seen writes under way keep their reservation (released when they settle), even if the list read has their pin: counting it twice until then only refuses sooner.
    for (const seen of this.#firstSeen.values()) if (seen.write !== undefined && seen.reserved !== undefined) this.#charge(seen.reserved, 1);
    this.#loaded = true;
    this.#version++;
  }

  /** The pin in force for a tool, as last read or written. */
  pinOf(tool: string): ToolPin | undefined {
    return this.#pins.get(tool);
  }

  /**
   * Starts recording the first-seen pin of a tool that has none, unless one is being written or
   * the last attempt failed less than `PIN_RETRY_MS` ago. The pin in force afterwards (this one,
   * or one another writer recorded first) is what the registry decides by. A pin that would take
   * its provenance past `TOOL_PIN_BOUNDS` is not written (`over-bound`): the tool is not served,
   * and the pins already held are untouched.
   */
  pinFirst(tool: string, provenance: string, definition: string, digest: string): FirstSeenOutcome {
    const store = this.#store;
    const seen = this.#firstSeen.get(tool);
    if (store === undefined || seen?.write !== undefined) return 'pending';
    const now = this.#clock.now();
    if (seen?.failedAt !== undefined && now - seen.failedAt < PIN_RETRY_MS) return 'pending';
    const reserved = { provenance, bytes: Buffer.byteLength(definition, 'utf8') };
    if (!this.#fits(reserved)) {
      this.#firstSeen.delete(tool);
      return 'over-bound';
    }
    this.#charge(reserved, 1);
    const pin: ToolPin = { tool, provenance, digest, definition, pinnedAt: now, pinnedBy: FIRST_SEEN };
    const release = () => {
      if (this.#firstSeen.get(tool)?.write === write) this.#charge(reserved, -1);
    };
    const write: Promise<void> = this.#writes
      .then(nextTurn)
      .then(() => attempt(() => store.pinFirst(pin)))
      .then((inForce) => {
        if (!isPin(inForce, tool)) throw new TypeError('the pin store answered without a pin');
        release();
        this.#setPin(inForce);
        this.#firstSeen.delete(tool);
        this.#version++;
      })
      .catch(() => {
        // Not served until a pin is durable; tried again after PIN_RETRY_MS.
        release();
        this.#firstSeen.set(tool, { digest, failedAt: this.#clock.now() });
        this.#version++;
      });
    this.#firstSeen.set(tool, { digest, write, reserved });
    this.#writes = within(write, this.#waitMs);
    return 'pending';
  }

  /** The bounds `pinFirst` keeps each provenance within. */
  get bounds(): ToolPinBounds {
    return this.#bounds;
  }

  /** What a provenance's pins take now (pins held and first-seen writes under way), for the operator and tests. */
  usage(provenance: string): { readonly count: number; readonly bytes: number } {
    const usage = this.#usage.get(provenance);
    return { count: usage?.count ?? 0, bytes: usage?.bytes ?? 0 };
  }

  /** Puts `pin` in force, moving what its predecessor took of its provenance's bound to it. */
  #setPin(pin: ToolPin): void {
    const before = this.#pins.get(pin.tool);
    if (before !== undefined) this.#charge({ provenance: before.provenance, bytes: Buffer.byteLength(before.definition, 'utf8') }, -1);
    this.#pins.set(pin.tool, pin);
    this.#charge({ provenance: pin.provenance, bytes: Buffer.byteLength(pin.definition, 'utf8') }, 1);
  }

  /** Adds (`sign` 1) or takes away (-1) one pin of `bytes` to its provenance's usage. */
  #charge({ provenance, bytes }: { readonly provenance: string; readonly bytes: number }, sign: 1 | -1): void {
    const usage = this.#usage.get(provenance) ?? { count: 0, bytes: 0 };
    usage.count += sign;
    usage.bytes += sign * bytes;
    if (usage.count <= 0) this.#usage.delete(provenance);
    else this.#usage.set(provenance, usage);
  }

  /** Whether one more pin of `bytes` keeps its provenance within `TOOL_PIN_BOUNDS`. */
  #fits({ provenance, bytes }: { readonly provenance: string; readonly bytes: number }): boolean {
    const usage = this.usage(provenance);
    return usage.count + 1 <= this.#bounds.pins && usage.bytes + bytes <= this.#bounds.bytes;
  }

  /**
   * Waits for the write of a tool's first-seen pin, if one is under way, for at most `waitMs`:
   * a store that hangs must not hold the call (or its caller) longer than that.
   */
  async settle(tool: string): Promise<void> {
    const write = this.#firstSeen.get(tool)?.write;
    if (write !== undefined) await within(write, this.#waitMs);
  }

  /** Whether the last first-seen write of this tool failed (the store is failing). */
  failed(tool: string): boolean {
    return this.#firstSeen.get(tool)?.failedAt !== undefined;
  }

  /** Whether some failed first-seen write is due to be tried again. */
  retryDue(): boolean {
    if (this.#firstSeen.size === 0) return false;
    const now = this.#clock.now();
    for (const seen of this.#firstSeen.values()) if (seen.failedAt !== undefined && now - seen.failedAt >= PIN_RETRY_MS) return true;
    return false;
  }

  /** Waits for every first-seen write under way, each for at most `waitMs` (one that takes longer stays pending). */
  async settled(): Promise<void> {
    await within(Promise.all([...this.#firstSeen.values()].map((s) => s.write)), this.#waitMs);
  }

  /**
   * Replaces a tool's pin with `pin` if the store's is still `expected` (see
   * `ToolPinStore.replace`), and serves by it at once. Rejects when the store fails.
   */
  async replace(expected: string | undefined, pin: ToolPin): Promise<boolean> {
    const store = this.#store;
    if (store === undefined) throw new GatewayError('UNAVAILABLE', 'The gateway has no tool pin store.');
    const replaced = (await attempt(() => store.replace(expected, pin))) === true;
    if (replaced) {
      this.#setPin(pin);
      this.#version++;
    }
    return replaced;
  }

  /**
   * Re-reads one held tool's pin from the store, at most every `PIN_REFRESH_MS`: another server
   * process sharing the store may have accepted the definition this one holds. A failure keeps
   * the pin held in memory (the tool stays held).
   */
  refresh(tool: string): Promise<void> | undefined {
    const store = this.#store;
    if (store === undefined || !this.#loaded) return undefined;
    const now = this.#clock.now();
    const last = this.#refreshedAt.get(tool);
    if (last !== undefined && now - last < PIN_REFRESH_MS) return undefined;
    this.#refreshedAt.set(tool, now);
    return attempt(() => store.get(tool)).then(
      (pin) => {
        const held = this.#pins.get(tool);
        if (isPin(pin, tool) && pin.digest !== held?.digest) {
          this.#setPin(pin);
          this.#version++;
        }
      },
      () => undefined,
    );
  }

  /** When the tool was first seen held at `digest` (recorded now if this is the first time). */
  heldSince(tool: string, digest: string): number {
    const key = `${tool}\u0000${digest}`;
    let since = this.#heldSince.get(key);
    if (since === undefined) {
      since = this.#clock.now();
      this.#heldSince.set(key, since);
    }
    return since;
  }

  /**
   * Forgets the failed first-seen writes of tools no longer waiting for a pin (gone from their
   * source, or their source is down), so `retryDue` does not keep asking for a new look at them.
   */
  keepFailed(pending: ReadonlySet<string>): void {
    for (const [tool, seen] of this.#firstSeen) if (seen.write === undefined && !pending.has(tool)) this.#firstSeen.delete(tool);
  }

  /** Forgets when tools were held at digests that are no longer held, so the map stays bounded. */
  keepHeldSince(current: ReadonlySet<string>): void {
    for (const key of this.#heldSince.keys()) if (!current.has(key)) this.#heldSince.delete(key);
  }
}

/** The `pinnedBy` of a pin recorded on first sight; an acceptance's names a tenant too (`acceptedBy`), so it can never be this. */
export const FIRST_SEEN = 'first-seen';

/**
 * The `pinnedBy` of an acceptance: `<tenant>/<principal id>`, which has a `/` no first sight's
 * has, so a principal named `first-seen` cannot pass an acceptance off as trust on first sight.
 * Control and invisible characters become `?` and the whole is cut to the pin's 256 characters.
 */
export function acceptedBy(principal: { readonly tenant: string; readonly id: string }): string {
  const clean = (text: string) => String(text).replace(UNSHOWABLE, '?') || '?';
  let by = '';
  // Cut by code points, so a pair is never split into a lone surrogate the pin rules refuse.
  for (const char of `${clean(principal.tenant)}/${clean(principal.id)}`) {
    if (by.length + char.length > MAX_PINNED_BY) break;
    by += char;
  }
  return by;
}

/** The pin rules' longest `pinnedBy`, in UTF-16 code units. */
const MAX_PINNED_BY = 256;
/** What the pin rules refuse in a `pinnedBy`: controls, invisible format characters, line separators, lone surrogates. */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Resolves on a later turn of the event loop, after the I/O that is waiting. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** `promise`'s value, or undefined once `ms` have passed without one. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a store call so that a store which throws instead of rejecting is a rejection too. */
function attempt<T>(call: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Whether a store's answer is a pin of `tool` (a broken store must not put garbage in force). */
function isPin(value: unknown, tool: string): value is ToolPin {
  if (typeof value !== 'object' || value === null) return false;
  const pin = value as Partial<ToolPin>;
  return pin.tool === tool && typeof pin.digest === 'string' && typeof pin.definition === 'string';
}
