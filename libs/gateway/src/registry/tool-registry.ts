import type { ToolDefinition, ToolPin, ToolSource, ToolSourceState, ToolSourceStatus } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';
import { checkToolDefinition, type ToolTrust } from './manifest-rules.js';
import { changeOf, parsePinned, type DefinitionChange } from './tool-changes.js';
import { digestOf, digested, type DefinitionDigest } from './tool-digest.js';
import type { ToolPins } from './tool-pins.js';

/** A tool a source offered that the registry refused, and why. */
export interface RejectedTool {
  readonly source: string;
  readonly tool: string;
  readonly reason: string;
}

/** The `source` of a first-party tool in the registry's reports. */
export const FIRST_PARTY_SOURCE = 'first-party';

/**
 * A valid tool the registry does not serve now, and why:
 * - `source`: its source is not `up` (the state is read from the source when asked);
 * - `held`: its definition differs from its pin (`changed`), or a first-party manifest's digest
 *   differs from its `integrity` (`integrity`), and no operator accepted the new one;
 * - `pending`: first seen, its pin is being written (or the last write failed and will be retried);
 * - `unpinned`: the gateway's pins are not loaded (or it has no pin store), so nothing pinned is served;
 * - `pins-full`: first seen after its source's pins reached their bound (`TOOL_PIN_BOUNDS`, ADR
 *   0069), so it is not pinned and not served.
 */
export type UnservedTool =
  | { readonly kind: 'source'; readonly tool: string; readonly source: string }
  | HeldDefinition
  | { readonly kind: 'pending'; readonly tool: string; readonly source: string; readonly failed: boolean }
  | { readonly kind: 'unpinned'; readonly tool: string; readonly source: string }
  | { readonly kind: 'pins-full'; readonly tool: string; readonly source: string };

/** A tool held because what it declares is not what was pinned (or what its `integrity` says). */
export interface HeldDefinition {
  readonly kind: 'held';
  readonly tool: string;
  /** The source's name, or `first-party`. */
  readonly source: string;
  readonly reason: 'changed' | 'integrity';
  /** The definition held back; never served, and its text never reaches an agent. */
  readonly definition: ToolDefinition;
  /** Its canonical JSON and digest now. */
  readonly declared: DefinitionDigest;
  /** The pin in force, if any (a first-party tool held for its `integrity` may have none). */
  readonly pin?: ToolPin;
}

/** A source as the registry sees it: its status, and how many of its tools the pins hold back. */
export interface RegistrySource {
  readonly name: string;
  readonly status: ToolSourceStatus;
  readonly held: number;
}

interface RegisteredSource {
  readonly source: ToolSource;
  readonly trust: ToolTrust;
  /** When it was added: the `since` of a source that reports no status of its own. */
  readonly addedAt: number;
}

/** What the registry decided from one reading of its sources and pins. */
interface Snapshot {
  /** What it was computed from: reused while every part is the same object or value. */
  readonly key: readonly unknown[];
  readonly visible: ReadonlyMap<string, ToolDefinition>;
  readonly withheld: ReadonlyMap<string, UnservedTool>;
  readonly rejected: readonly RejectedTool[];
}

/**
 * The tools the gateway knows: first-party tools registered at start, plus sources whose tool
 * list changes at run time (MCP servers). Every definition is checked before it becomes
 * visible (see `checkToolDefinition`); a static tool that fails throws, a source's tool that
 * fails is left out and listed by `rejected()`. Names are unique: a source cannot shadow a
 * registered tool or another source's tool, and offers only tools of its own provenance.
 *
 * A valid tool is served only while nothing withholds it (ADR 0060): a source's tool only while
 * its source is `up` and its definition's digest equals its pin (a first-seen tool is pinned
 * first), a first-party tool with `integrity` only while that equals its digest or an accepted
 * pin. The pins come from the gateway (`usePins`); without them nothing pinned is served.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #sources: RegisteredSource[] = [];
  /** Verdicts on source definitions, by identity: a definition is checked once. */
  readonly #verdicts = new WeakMap<ToolDefinition, string | null>();
  #pins: ToolPins | undefined;
  #snapshot: Snapshot | undefined;
  readonly #log: ((message: string) => void) | undefined;
  /** Sources the operator was told reached their pin bound: once each, not once per fresh name they list. */
  readonly #reportedFull = new Set<string>();

  /** `log`: the operator log, told once per source that reached its pin bound (ADR 0069). */
  constructor(tools: readonly ToolDefinition[] = [], options: { readonly log?: (message: string) => void } = {}) {
    this.#log = options.log;
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws `GatewayError` INVALID for a bad manifest, CONFLICT for a taken name. */
  register(def: ToolDefinition, trust: ToolTrust = {}): void {
    checkToolDefinition(def, trust);
    const name = def.manifest.name;
    if (this.#tools.has(name)) throw new GatewayError('CONFLICT', `a tool named '${name}' is already registered`);
    if (def.manifest.integrity !== undefined) {
      const digest = digestOf(def);
      if ('error' in digest) throw new GatewayError('INVALID', `tool '${name}': ${digest.error}`);
    }
    this.#tools.set(name, def);
    this.#snapshot = undefined;
  }

  /** Adds a source of tools read on every lookup; throws CONFLICT if a source of that name exists. */
  addSource(source: ToolSource, trust: ToolTrust = {}): void {
    if (this.#sources.some((s) => s.source.name === source.name)) {
      throw new GatewayError('CONFLICT', `a tool source named '${source.name}' is already added`);
    }
    this.#sources.push({ source, trust, addedAt: Date.now() });
    this.#snapshot = undefined;
  }

  /**
   * Decides pinned tools by these pins from now on. The gateway calls it once with its own; a
   * registry already deciding by other pins refuses (CONFLICT), so two gateways cannot disagree
   * about what one registry serves.
   */
  usePins(pins: ToolPins): void {
    if (this.#pins !== undefined && this.#pins !== pins) throw new GatewayError('CONFLICT', 'this tool registry already serves by another gateway’s pins');
    this.#pins = pins;
    this.#snapshot = undefined;
  }

  /** The served tool of that name, or undefined (unknown, rejected or withheld). */
  get(name: string): ToolDefinition | undefined {
    return this.#current().visible.get(name);
  }

  /** Every served tool: registered ones in registration order, then each source's. */
  list(): ToolDefinition[] {
    return [...this.#current().visible.values()];
  }

  /** Source tools currently left out as invalid or clashing, with the reason (for operators and `health`). */
  rejected(): readonly RejectedTool[] {
    return this.#current().rejected;
  }

  /**
   * Why a valid tool of that name is not served, or undefined if it is served or unknown. A name
   * no source offers but in the namespace (`<server>__`) of a source that is not up is that
   * source's: its tools may be unknown until it is up again.
   */
  withheld(name: string): UnservedTool | undefined {
    const snapshot = this.#current();
    if (snapshot.visible.has(name)) return undefined;
    const known = snapshot.withheld.get(name);
    if (known !== undefined) {
      // Another server process sharing the pin store may have accepted it; the next lookup sees that.
      if (known.kind === 'held') void this.#pins?.refresh(name);
      return known;
    }
    for (const { source } of this.#sources) {
      if (name.startsWith(`${source.name.replace(/-/g, '_')}__`) && stateOf(source).state !== 'up') return { kind: 'source', tool: name, source: source.name };
    }
    return undefined;
  }

  /**
   * Waits (bounded by the gateway's `pinWaitMs`) for the first-seen pin of `name` to be written,
   * if one is being written, then answers as `get` does: the lookup gate's way of waiting out the
   * window between a new tool appearing and its pin being durable, rather than serving it unpinned.
   */
  async settle(name: string): Promise<ToolDefinition | undefined> {
    await this.#pins?.settle(name);
    return this.get(name);
  }

  /** Every tool held for its definition, in name order. */
  held(): readonly HeldDefinition[] {
    const held: HeldDefinition[] = [];
    for (const entry of this.#current().withheld.values()) if (entry.kind === 'held') held.push(entry);
    return held.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  }

  /** Each source in the order added, with its status and how many of its tools are held. */
  sources(): readonly RegistrySource[] {
    const snapshot = this.#current();
    const held = new Map<string, number>();
    for (const entry of snapshot.withheld.values()) if (entry.kind === 'held') held.set(entry.source, (held.get(entry.source) ?? 0) + 1);
    return this.#sources.map(({ source, addedAt }) => ({ name: source.name, status: stateOf(source, addedAt), held: held.get(source.name) ?? 0 }));
  }

  /** The snapshot for the sources and pins as they are now, recomputed only when one of them changed. */
  #current(): Snapshot {
    const pins = this.#pins;
    if (pins?.retryDue() === true) this.#snapshot = undefined;
    const key: unknown[] = [pins?.version, pins?.loaded];
    const offers: { registered: RegisteredSource; tools: readonly ToolDefinition[]; up: boolean }[] = [];
    for (const registered of this.#sources) {
      const tools = offered(registered.source);
      const up = stateOf(registered.source).state === 'up';
      key.push(tools, up);
      offers.push({ registered, tools, up });
    }
    const known = this.#snapshot;
    if (known !== undefined && known.key.length === key.length && known.key.every((part, i) => part === key[i])) return known;
    const snapshot = this.#compute(key, offers);
    this.#snapshot = snapshot;
    return snapshot;
  }

  /**
   * Tools a source may offer: valid, of its own provenance, and named uniquely. Two sources that
   * offer one name both lose it, so the order sources were added in never decides which code a
   * name runs; each loser is listed by `rejected()` with the other source named. Then every valid
   * tool is served or withheld by its source's state and its pin.
   */
  #compute(key: readonly unknown[], offers: readonly { registered: RegisteredSource; tools: readonly ToolDefinition[]; up: boolean }[]): Snapshot {
    const visible = new Map<string, ToolDefinition>();
    const withheld = new Map<string, UnservedTool>();
    const rejected = new Map<string, RejectedTool>();
    const reject = (source: string, tool: string, reason: string) => rejected.set(`${source}\u0000${tool}`, { source, tool, reason });
    const heldKeys = new Set<string>();
    const pending = new Set<string>();
    const decide = (def: ToolDefinition, source: string, registered = false) => {
      const verdict = this.#pinVerdict(def, source, registered);
      if (verdict === 'served') visible.set(def.manifest.name, def);
      else if ('error' in verdict) reject(source, def.manifest.name, verdict.error);
      else {
        withheld.set(def.manifest.name, verdict);
        if (verdict.kind === 'held') heldKeys.add(`${verdict.tool}\u0000${verdict.declared.digest}`);
        else if (verdict.kind === 'pending') pending.add(verdict.tool);
      }
    };
    for (const def of this.#tools.values()) decide(def, FIRST_PARTY_SOURCE, true);

    const claims = new Map<string, { source: string; def: ToolDefinition; up: boolean }[]>();
    for (const { registered, tools, up } of offers) {
      const { source, trust } = registered;
      for (const def of tools) {
        const name = String(def?.manifest?.name);
        const reason =
          this.#verdict(def, trust) ??
          (def.manifest.provenance !== `mcp:${source.name}`
            ? `its provenance '${String(def.manifest.provenance)}' is not 'mcp:${source.name}', the source offering it`
            : this.#tools.has(name)
              ? `the name '${name}' is already taken`
              : null);
        if (reason !== null) reject(source.name, name, reason);
        else claims.set(name, [...(claims.get(name) ?? []), { source: source.name, def, up }]);
      }
    }
    for (const [name, claimants] of claims) {
      if (claimants.length === 1) {
        const { source, def, up } = claimants[0]!;
        // A source that is down offers nothing, whatever it last listed; its pins wait until it is up.
        if (up) decide(def, source);
        else withheld.set(name, { kind: 'source', tool: name, source });
        continue;
      }
      const sources = [...new Set(claimants.map((c) => c.source))].map((s) => `'${s}'`).join(' and ');
      for (const { source } of claimants) reject(source, name, `the name '${name}' is offered by ${sources}; none of them is registered`);
    }
    this.#pins?.keepHeldSince(heldKeys);
    this.#pins?.keepFailed(pending);
    return { key, visible, withheld, rejected: [...rejected.values()] };
  }

  /**
   * Whether a valid tool is served by the pins: a registered (first-party) tool without
   * `integrity` always; one with it while that equals its digest or an accepted pin does; a
   * source's tool while its pin equals its digest. A source's tool without a pin is pinned
   * first-seen and waits for the write. (`integrity` is a manifest field only registered tools
   * are judged by: a source's tool is pinned by what its server declared, whatever it claims.)
   */
  #pinVerdict(def: ToolDefinition, source: string, registered: boolean): 'served' | Exclude<UnservedTool, { kind: 'source' }> | { error: string } {
    const { name, provenance, integrity } = def.manifest;
    if (registered && integrity === undefined) return 'served';
    const declared = digestOf(def);
    if ('error' in declared) return declared;
    if (registered && integrity === declared.digest) return 'served';
    const pins = this.#pins;
    if (pins === undefined || !pins.loaded) return { kind: 'unpinned', tool: name, source };
    const pin = pins.pinOf(name);
    if (pin?.digest === declared.digest) return 'served';
    if (registered || pin !== undefined) {
      pins.heldSince(name, declared.digest);
      return { kind: 'held', tool: name, source, reason: registered ? 'integrity' : 'changed', definition: def, declared, ...(pin ? { pin } : {}) };
    }
    if (pins.pinFirst(name, provenance, declared.canonical, declared.digest) === 'over-bound') {
      this.#reportFull(source, provenance, pins);
      return { kind: 'pins-full', tool: name, source };
    }
    return { kind: 'pending', tool: name, source, failed: pins.failed(name) };
  }

  /** Tells the operator, once per source, that its pin bound refused a new tool. */
  #reportFull(source: string, provenance: string, pins: ToolPins): void {
    if (this.#reportedFull.has(source) || this.#log === undefined) return;
    this.#reportedFull.add(source);
    const { count, bytes } = pins.usage(provenance);
    try {
      this.#log(
        `MCP server '${source}' reached its tool pin bound (${count} pins, ${bytes} bytes of definitions; at most ${pins.bounds.pins} pins and ${pins.bounds.bytes} bytes): its new tools are not pinned and not served, its pinned ones are served as before (ADR 0069)`,
      );
    } catch {
      // A failing log must not decide what is served.
    }
  }

  #verdict(def: ToolDefinition, trust: ToolTrust): string | null {
    const known = this.#verdicts.get(def);
    if (known !== undefined) return known;
    let verdict: string | null = null;
    try {
      checkToolDefinition(def, trust);
    } catch (error) {
      verdict = error instanceof Error ? error.message : 'the definition is invalid';
    }
    if (typeof def === 'object' && def !== null) this.#verdicts.set(def, verdict);
    return verdict;
  }
}

/** A source that fails to list its tools offers none: its tools disappear rather than half-work. */
function offered(source: ToolSource): readonly ToolDefinition[] {
  try {
    const tools = source.tools();
    return Array.isArray(tools) ? tools : [];
  } catch {
    return [];
  }
}

const STATES: readonly ToolSourceState[] = ['starting', 'up', 'restarting', 'failed', 'stopped'];

/**
 * A source's status. One without `status()` is always up (an in-process source); one whose
 * `status()` throws or answers something that is not a status is `failed`: its tools are not
 * offered on a report nobody can read.
 */
export function stateOf(source: ToolSource, since = 0): ToolSourceStatus {
  if (typeof source.status !== 'function') {
    return { state: 'up', transport: 'stdio', attempt: 0, accepted: offered(source).length, rejected: 0, since };
  }
  try {
    const status = source.status();
    if (typeof status === 'object' && status !== null && STATES.includes(status.state)) return status;
  } catch {
    // Falls through to `failed`.
  }
  return { state: 'failed', transport: 'stdio', attempt: 0, accepted: 0, rejected: 0, since };
}

// A held definition's change is worked out once: denials and the operator's list both ask for it.
const changes = new WeakMap<HeldDefinition, DefinitionChange>();

/** What differs between a held tool's pin and what it declares now (nothing is known without a pin). */
export function changeOfHeld(held: HeldDefinition): DefinitionChange {
  let change = changes.get(held);
  if (change === undefined) {
    change = changeOf(held.pin === undefined ? undefined : parsePinned(held.pin.definition), digested(held.definition));
    changes.set(held, change);
  }
  return change;
}
