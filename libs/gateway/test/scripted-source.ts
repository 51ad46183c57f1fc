import type { JsonObject, ToolDefinition, ToolSource, ToolSourceState, ToolSourceStatus } from '@toolgate/contracts';
import { MemoryToolPinStore } from '@toolgate/adapter-store-memory';
import type { ToolPin } from '@toolgate/contracts';

/** One tool as an MCP server lists it (its own entry, which the gateway pins). */
export type DeclaredTool = JsonObject & { name: string; description?: string };

/** A plain tool entry of server `files`, with a closed input schema of one string property. */
export function declaredTool(name: string, overrides: JsonObject = {}): DeclaredTool {
  return {
    name,
    description: `Reads ${name}.`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    annotations: { readOnlyHint: true, destructiveHint: false },
    ...overrides,
  };
}

/**
 * A tool source in-process, standing for an MCP server: it lists the entries a test gives it
 * (`list`), as the MCP adapter does (manifest from the entry, `declared` the entry itself), and
 * reports the state a test sets. Definitions are rebuilt only when the list changes, as the
 * adapter hands out the same objects until its server's list changes.
 */
export class ScriptedSource implements ToolSource {
  state: ToolSourceState = 'up';
  attempt = 0;
  since = 0;
  readonly calls: { tool: string; args: JsonObject }[] = [];
  #definitions: readonly ToolDefinition[] = [];

  constructor(
    readonly name: string,
    entries: readonly DeclaredTool[] = [],
    private readonly risk: 'medium' | 'high' = 'medium',
  ) {
    this.list(entries);
  }

  /** The server now lists these entries (as after `notifications/tools/list_changed`). */
  list(entries: readonly DeclaredTool[]): void {
    this.#definitions = entries.map((entry) => this.#definition(entry));
  }

  tools(): readonly ToolDefinition[] {
    return this.#definitions;
  }

  status(): ToolSourceStatus {
    return { state: this.state, transport: 'stdio', attempt: this.attempt, accepted: this.#definitions.length, rejected: 0, since: this.since };
  }

  #definition(entry: DeclaredTool): ToolDefinition {
    const input = (entry['inputSchema'] as JsonObject | undefined) ?? { type: 'object', properties: {}, additionalProperties: false };
    // Named as the MCP adapter names a server's tool: snake case, so `Read` and `read` are one name.
    const tool = entry.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9_]/g, '_');
    const name = `${this.name.replace(/-/g, '_')}__${tool}`;
    return {
      manifest: {
        name,
        version: '1.0.0',
        description: typeof entry.description === 'string' && entry.description.trim() !== '' ? entry.description : `Tool ${entry.name}.`,
        provenance: `mcp:${this.name}`,
        risk: this.risk,
        permissions: [],
        input: { ...input, additionalProperties: false },
        output: {},
        tier: 'inprocess',
        timeoutMs: 1000,
      },
      handler: {
        invoke: async (args) => {
          this.calls.push({ tool: name, args });
          return { ran: name };
        },
      },
      declared: structuredClone(entry),
    };
  }
}

/** What a test makes a pin store do on each call (the store itself stays the real memory store). */
export type StoreFault = 'ok' | 'throw' | 'reject' | 'hang' | 'garbage';

/**
 * The memory pin store with a fault switch per method: a store that is down (`reject`), one
 * that breaks its promise contract (`throw` synchronously), one that never answers (`hang`) and
 * one that answers without a pin (`garbage`). `ok` is the store as it is.
 */
export class FaultyPinStore extends MemoryToolPinStore {
  faults: { list: StoreFault; get: StoreFault; pinFirst: StoreFault; replace: StoreFault } = { list: 'ok', get: 'ok', pinFirst: 'ok', replace: 'ok' };
  /** Resolved once per `pinFirst` that reached the real store. */
  written = 0;
  /** Set to hold every `pinFirst` until `release()` is called. */
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  /** Holds `pinFirst` calls until `release()`: the window between a tool appearing and its pin being durable. */
  hold(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }

  release(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  override list(): Promise<readonly ToolPin[]> {
    return this.#faulty('list', () => super.list());
  }

  override get(tool: string): Promise<ToolPin | undefined> {
    return this.#faulty('get', () => super.get(tool));
  }

  override pinFirst(pin: ToolPin): Promise<ToolPin> {
    return this.#faulty('pinFirst', async () => {
      if (this.#gate) await this.#gate;
      const inForce = await super.pinFirst(pin);
      this.written++;
      return inForce;
    });
  }

  override replace(expectedDigest: string | undefined, pin: ToolPin): Promise<boolean> {
    return this.#faulty('replace', () => super.replace(expectedDigest, pin));
  }

  #faulty<T>(method: keyof FaultyPinStore['faults'], real: () => Promise<T>): Promise<T> {
    switch (this.faults[method]) {
      case 'throw':
        throw new Error(`pin store at /var/lib/toolgate/pins.db: ${method} failed`);
      case 'reject':
        return Promise.reject(new Error(`pin store at /var/lib/toolgate/pins.db: ${method} failed`));
      case 'hang':
        return new Promise<T>(() => undefined);
      case 'garbage':
        return Promise.resolve(undefined as T);
      default:
        return real();
    }
  }
}
