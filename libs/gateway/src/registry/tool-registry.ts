import type { ToolDefinition, ToolSource } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';
import { checkToolDefinition, type ToolTrust } from './manifest-rules.js';

/** A tool a source offered that the registry refused, and why. */
export interface RejectedTool {
  readonly source: string;
  readonly tool: string;
  readonly reason: string;
}

interface RegisteredSource {
  readonly source: ToolSource;
  readonly trust: ToolTrust;
}

/**
 * The tools the gateway knows: first-party tools registered at start, plus sources whose tool
 * list changes at run time (MCP servers). Every definition is checked before it becomes
 * visible (see `checkToolDefinition`); a static tool that fails throws, a source's tool that
 * fails is left out and listed by `rejected()`. Names are unique: a source cannot shadow a
 * registered tool or another source's tool, and offers only tools of its own provenance.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #sources: RegisteredSource[] = [];
  /** Verdicts on source definitions, by identity: a definition is checked once. */
  readonly #verdicts = new WeakMap<ToolDefinition, string | null>();
  readonly #rejected = new Map<string, RejectedTool>();

  constructor(tools: readonly ToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws `GatewayError` INVALID for a bad manifest, CONFLICT for a taken name. */
  register(def: ToolDefinition, trust: ToolTrust = {}): void {
    checkToolDefinition(def, trust);
    const name = def.manifest.name;
    if (this.#tools.has(name)) throw new GatewayError('CONFLICT', `a tool named '${name}' is already registered`);
    this.#tools.set(name, def);
  }

  /** Adds a source of tools read on every lookup; throws CONFLICT if a source of that name exists. */
  addSource(source: ToolSource, trust: ToolTrust = {}): void {
    if (this.#sources.some((s) => s.source.name === source.name)) {
      throw new GatewayError('CONFLICT', `a tool source named '${source.name}' is already added`);
    }
    this.#sources.push({ source, trust });
  }

  /** The tool of that name, or undefined. */
  get(name: string): ToolDefinition | undefined {
    const registered = this.#tools.get(name);
    if (registered) return registered;
    if (this.#sources.length === 0) return undefined;
    return this.#fromSources().get(name);
  }

  /** Every visible tool: registered ones in registration order, then each source's. */
  list(): ToolDefinition[] {
    return [...this.#tools.values(), ...this.#fromSources().values()];
  }

  /** Source tools currently left out, with the reason (for operators and `health`). */
  rejected(): readonly RejectedTool[] {
    this.#fromSources();
    return [...this.#rejected.values()];
  }

  /**
   * Tools a source may offer: valid, of its own provenance, and named uniquely. Two sources that
   * offer one name both lose it, so the order sources were added in never decides which code a
   * name runs; each loser is listed by `rejected()` with the other source named.
   */
  #fromSources(): Map<string, ToolDefinition> {
    this.#rejected.clear();
    const claims = new Map<string, { source: string; def: ToolDefinition }[]>();
    const reject = (source: string, tool: string, reason: string) => this.#rejected.set(`${source}\u0000${tool}`, { source, tool, reason });
    for (const { source, trust } of this.#sources) {
      for (const def of offered(source)) {
        const name = String(def?.manifest?.name);
        const reason =
          this.#verdict(def, trust) ??
          (def.manifest.provenance !== `mcp:${source.name}`
            ? `its provenance '${String(def.manifest.provenance)}' is not 'mcp:${source.name}', the source offering it`
            : this.#tools.has(name)
              ? `the name '${name}' is already taken`
              : null);
        if (reason !== null) reject(source.name, name, reason);
        else claims.set(name, [...(claims.get(name) ?? []), { source: source.name, def }]);
      }
    }
    const visible = new Map<string, ToolDefinition>();
    for (const [name, claimants] of claims) {
      if (claimants.length === 1) {
        visible.set(name, claimants[0]!.def);
        continue;
      }
      const sources = [...new Set(claimants.map((c) => c.source))].map((s) => `'${s}'`).join(' and ');
      for (const { source } of claimants) reject(source, name, `the name '${name}' is offered by ${sources}; none of them is registered`);
    }
    return visible;
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
