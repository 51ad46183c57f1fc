import type { AuditEvent, AuditSink, Clock, Principal, ToolPin, ToolSourceStatus } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';
import type { DefinitionChange } from '../registry/tool-changes.js';
import { acceptedBy, type ToolPins } from '../registry/tool-pins.js';
import { changeOfHeld, type HeldDefinition, type ToolRegistry } from '../registry/tool-registry.js';
import { requireRole } from './roles.js';

/** A source as `health` and `tools.list` report it: its own status, and how many of its tools are held. */
export interface ToolSourceReport extends ToolSourceStatus {
  /** The source's configured name (an MCP server's name). */
  readonly name: string;
  /** Its tools held because their definition changed since it was pinned (not served to anyone). */
  readonly held: number;
}

/**
 * A tool held back because its definition is not the pinned one, as an admin reviews it. The
 * excerpts and names are the untrusted party's text, bounded and escaped to one visible line.
 */
export interface HeldTool extends DefinitionChange {
  /** The tool's registry name. */
  readonly tool: string;
  /** The source offering it, or `first-party`. */
  readonly source: string;
  /** `changed`: it differs from its pin; `integrity`: a first-party manifest differs from its `integrity`. */
  readonly reason: 'changed' | 'integrity';
  /** The digest it is pinned at (for `integrity` without an accepted pin: the manifest's `integrity`). */
  readonly pinnedDigest: string;
  /** Who pinned that digest: `first-seen`, or `<tenant>/<principal id>` of the admin who accepted it; absent without a pin. */
  readonly pinnedBy?: string;
  /** The digest of what it declares now: what `acceptToolDefinition` must be given. */
  readonly newDigest: string;
  /** Epoch ms when this gateway first saw it held at `newDigest`. */
  readonly heldSince: number;
}

/** What the pin desk uses: the registry's verdicts, the pins it writes through, the audit and the clock. */
export interface ToolPinNeeds {
  readonly registry: Pick<ToolRegistry, 'held' | 'get' | 'withheld'>;
  readonly pins: Pick<ToolPins, 'replace' | 'heldSince'>;
  readonly audit: Pick<AuditSink, 'append'>;
  readonly clock: Clock;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const MAX_TOOL_NAME = 128;

/**
 * Reviewing and accepting changed tool definitions. Pins are global (every tenant is served the
 * same source), so only the built-in `admin` role may do either: a tenant's `operator` deciding
 * for every tenant would reach beyond its own (ADR 0060).
 */
export class ToolPinDesk {
  /** Accepts in progress by tool, so two accepts of one tool in this process run one after the other. */
  readonly #accepting = new Map<string, Promise<unknown>>();

  constructor(private readonly needs: ToolPinNeeds) {}

  /** Every held tool with what changed (admin only). */
  held(principal: Principal): readonly HeldTool[] {
    requireRole(principal, 'admin', 'review changed tool definitions');
    return this.needs.registry.held().map((held) => this.#view(held));
  }

  /**
   * Accepts the held definition of `tool` whose digest is `digest` (the one the admin reviewed):
   * audited first, then pinned, then served at once. A definition that changed again since is
   * refused (CONFLICT), as is one the store saw replaced meanwhile.
   */
  async accept(principal: Principal, request: { tool: string; digest: string }): Promise<ToolPin> {
    requireRole(principal, 'admin', 'accept changed tool definitions');
    const { tool, digest } = checkRequest(request);
    const before = this.#accepting.get(tool) ?? Promise.resolve();
    const run = before.then(
      () => this.#accept(principal, tool, digest),
      () => this.#accept(principal, tool, digest),
    );
    const settled = run.catch(() => undefined);
    this.#accepting.set(tool, settled);
    void settled.then(() => {
      if (this.#accepting.get(tool) === settled) this.#accepting.delete(tool);
    });
    return run;
  }

  async #accept(principal: Principal, tool: string, digest: string): Promise<ToolPin> {
    const { registry, pins, audit, clock } = this.needs;
    const held = registry.held().find((h) => h.tool === tool);
    if (held === undefined) {
      if (registry.get(tool) !== undefined) throw new GatewayError('CONFLICT', `'${tool}' is not held: it is served as it is, so there is nothing to accept.`);
      const withheld = registry.withheld(tool);
      if (withheld !== undefined) {
        if (withheld.kind === 'pins-full') {
          throw new GatewayError('CONFLICT', `'${tool}' is not held for its definition: its source '${withheld.source}' reached its pin bound, so it was never pinned and there is nothing to accept.`);
        }
        throw new GatewayError('CONFLICT', `'${tool}' is not held for its definition (${withheld.kind === 'source' ? `its source '${withheld.source}' is not up` : 'its pin is not settled yet'}); try again later.`);
      }
      throw new GatewayError('NOT_FOUND', `There is no held tool named '${tool}'.`);
    }
    if (held.declared.digest !== digest) {
      throw new GatewayError(
        'CONFLICT',
        `'${tool}' does not declare ${digest} now (it declares ${held.declared.digest}): its definition changed again since it was reviewed; review it again with tools held.`,
      );
    }
    const now = clock.now();
    const replacing = held.pin?.digest;
    const was = replacing ?? (held.reason === 'integrity' ? `no pin (integrity ${held.definition.manifest.integrity ?? 'none'})` : 'no pin');
    const event: AuditEvent = {
      event: 'tool_accepted',
      ts: new Date(now).toISOString(),
      tenant: principal.tenant,
      principal: principal.id,
      tool,
      version: held.definition.manifest.version,
      detail: `accepted ${digest} in place of ${was}`,
    };
    let seq: number;
    try {
      seq = (await audit.append(event)).seq;
    } catch {
      throw new GatewayError('UNAVAILABLE', 'The gateway could not audit the acceptance (the audit is unavailable), so the definition was not accepted.');
    }
    const pin: ToolPin = { tool, provenance: held.definition.manifest.provenance, digest, definition: held.declared.canonical, pinnedAt: now, pinnedBy: acceptedBy(principal) };
    let replaced: boolean;
    try {
      replaced = await pins.replace(replacing, pin);
    } catch {
      await this.#followUp(event, `outcome unknown: the pin store failed (the acceptance recorded at seq ${seq})`);
      throw new GatewayError('UNAVAILABLE', 'The gateway could not store the accepted definition (the pin store is unavailable); the tool stays held.');
    }
    if (!replaced) {
      await this.#followUp(event, `not applied: the pin changed meanwhile (the acceptance recorded at seq ${seq})`);
      throw new GatewayError('CONFLICT', `The pin of '${tool}' changed while it was being accepted; review it again with tools held.`);
    }
    return pin;
  }

  /** A follow-up record of an acceptance that did not take effect, on a best-effort basis (the caller is refused either way). */
  async #followUp(event: AuditEvent, detail: string): Promise<void> {
    try {
      await this.needs.audit.append({ ...event, ts: new Date(this.needs.clock.now()).toISOString(), detail });
    } catch {
      // The pin store, which holds who pinned what, is the tie-breaker.
    }
  }

  #view(held: HeldDefinition): HeldTool {
    const pinnedDigest = held.pin?.digest ?? held.definition.manifest.integrity ?? 'none';
    return {
      tool: held.tool,
      source: held.source,
      reason: held.reason,
      pinnedDigest,
      ...(held.pin === undefined ? {} : { pinnedBy: held.pin.pinnedBy }),
      newDigest: held.declared.digest,
      heldSince: this.needs.pins.heldSince(held.tool, held.declared.digest),
      ...changeOfHeld(held),
    };
  }
}

function checkRequest(request: { tool: string; digest: string }): { tool: string; digest: string } {
  if (typeof request !== 'object' || request === null) throw new GatewayError('INVALID', 'an acceptance names a tool and a digest');
  const { tool, digest } = request;
  // eslint-disable-next-line no-control-regex
  if (typeof tool !== 'string' || tool.length === 0 || tool.length > MAX_TOOL_NAME || /[\u0000-\u001f\u007f-\u009f\s]/.test(tool)) {
    throw new GatewayError('INVALID', `tool must be a tool's name (1 to ${MAX_TOOL_NAME} characters, no spaces or controls)`);
  }
  if (typeof digest !== 'string' || !DIGEST.test(digest)) throw new GatewayError('INVALID', "digest must be 'sha256:' and 64 lowercase hex digits, as tools held shows it");
  return { tool, digest };
}
