import type { Denial, ToolDefinition, ToolSourceStatus } from '@toolgate/contracts';
import type { Call, CallGate } from '../call.js';
import { closestNames } from '../denials/closest-names.js';
import { deny } from '../denials/deny.js';
import type { ToolAccess } from '../registry/tool-access.js';
import { MEMBERS } from '../registry/tool-changes.js';
import { ALIAS_SHAPE, resolveAlias } from '../registry/tool-exports.js';
import { changeOfHeld, type HeldDefinition, type ToolRegistry, type UnservedTool } from '../registry/tool-registry.js';

/** What the lookup gate reads: the registered tools, and which of them the caller may use (for suggestions and aliases). */
export interface LookupNeeds {
  readonly registry: Pick<ToolRegistry, 'get' | 'list' | 'withheld' | 'settle' | 'sources'>;
  readonly access: Pick<ToolAccess, 'toolsOf'>;
}

/** The longest name a refusal repeats: the longest a registered tool can have. */
const SHOWN_NAME_CHARS = 128;

/**
 * Gate 1: the tool exists, at the version the caller pinned. A name is a registered tool's real
 * name first; only when it is none may it be the alias an export gave a tool (ADR 0053), and then
 * only of a tool the caller may use, so an alias never reaches, or reveals, another role's tool.
 * From here on the call is the real tool's: the audit, the approval and the digests name it.
 * Suggestions for an unknown name come only from tools the caller may use, so a typo never
 * reveals another role's tools.
 */
export function lookupGate({ registry, access }: LookupNeeds): CallGate {
  /** The verdict once it is known whether the name is a served tool, and if not, whether it is withheld. */
  const decide = (call: Call, served: ToolDefinition | undefined, withheld: UnservedTool | undefined): Denial | undefined => {
    const { tool: name, version } = call.request;
    if (!served && withheld) return withheldDenial(withheld, registry);
    let tool = served;
    // A miss lists the catalog once, for the alias and for the suggestions alike.
    const all = tool ? undefined : registry.list();
    const mine = all ? access.toolsOf(call.principal, all) : [];
    if (all && typeof name === 'string') tool = byAlias(name, all, mine);
    if (!tool) {
      const shown = typeof name === 'string' ? name.slice(0, SHOWN_NAME_CHARS) : String(name);
      const close = typeof name === 'string' ? closestNames(name, mine) : [];
      return deny(
        'lookup',
        'TOOL_NOT_FOUND',
        `There is no tool named '${shown}'.`,
        close.length > 0 ? `Did you mean: ${close.join(', ')}?` : 'Call tools.list to see the tools you may use.',
        { suggestions: close },
      );
    }
    if (version !== undefined && version !== tool.manifest.version) {
      return deny(
        'lookup',
        'VERSION_MISMATCH',
        // Named as sent: the call has no tool yet for the refusal to be reworded by, and an alias is what the caller knows.
        `'${String(name)}' is pinned at version ${tool.manifest.version}, not ${String(version).slice(0, 32)}.`,
        `Call it with version '${tool.manifest.version}' (and check its manifest with tools.list: it may have changed).`,
        { version: tool.manifest.version },
      );
    }
    call.tool = tool;
    return undefined;
  };
  return {
    name: 'lookup',
    check(call) {
      const name = call.request.tool;
      if (typeof name !== 'string') return decide(call, undefined, undefined);
      const served = registry.get(name);
      if (served) return decide(call, served, undefined);
      const withheld = registry.withheld(name);
      // The window between a new tool appearing and its pin being durable: wait it out, never serve unpinned.
      if (withheld?.kind === 'pending' && !withheld.failed) return registry.settle(name).then((settled) => decide(call, settled, registry.withheld(name)));
      return decide(call, undefined, withheld);
    },
  };
}

/**
 * The refusal of a valid tool that is not served. A held tool's refusal names which members of
 * its definition changed (by their fixed names), never the new text: that is what the hold keeps
 * from agents. A source that is down is named with its state.
 */
function withheldDenial(withheld: UnservedTool, registry: Pick<ToolRegistry, 'sources'>): Denial {
  const tool = withheld.tool.slice(0, SHOWN_NAME_CHARS);
  switch (withheld.kind) {
    case 'source': {
      const status = registry.sources().find((s) => s.name === withheld.source)?.status;
      return deny(
        'lookup',
        'SOURCE_UNAVAILABLE',
        `MCP server '${withheld.source}' ${stateText(status)}, so '${tool}' cannot be called now.`,
        'Try again later: its tools are offered again once it is up (tools.list shows them).',
        { source: withheld.source, state: status?.state ?? 'failed', attempt: status?.attempt ?? 0 },
      );
    }
    case 'held':
      return heldDenial(tool, withheld);
    case 'pins-full': {
      const status = registry.sources().find((s) => s.name === withheld.source)?.status;
      // Source-class: the tool is refused because of what its source did (too many new tools), not because of the caller or the store.
      return deny(
        'lookup',
        'SOURCE_UNAVAILABLE',
        `'${tool}' is not served: MCP server '${withheld.source}' has listed more new tools than the gateway pins per server, so this one was not pinned.`,
        'Its other tools are served as before; an operator can check the gateway log and the server.',
        { source: withheld.source, state: status?.state ?? 'failed', attempt: status?.attempt ?? 0, reason: 'pins-full' },
      );
    }
    case 'pending':
    case 'unpinned':
      return deny(
        'lookup',
        'STATE_UNAVAILABLE',
        withheld.kind === 'unpinned'
          ? `'${tool}' cannot be called yet: the gateway has not loaded its tool pins, and serves no pinned tool until it has.`
          : `'${tool}' cannot be called yet: the gateway could not record its definition (the pin store is unavailable), and serves no tool unpinned.`,
        'Try again later; an operator can check the gateway with health.',
      );
  }
}

function heldDenial(tool: string, held: HeldDefinition): Denial {
  const known: readonly string[] = MEMBERS;
  const changed = changeOfHeld(held).changed;
  const members = changed.filter((m) => known.includes(m));
  const others = changed.length - members.length;
  const what = [...members, ...(others > 0 ? [`${others} other member${others === 1 ? '' : 's'}`] : [])].join(', ');
  const message =
    held.reason === 'integrity'
      ? `'${tool}' is held: its manifest does not match its integrity digest${what ? ` (and differs from the accepted one in: ${what})` : ''}, so it cannot be called until an operator accepts it.`
      : `'${tool}' is held: its definition changed since it was accepted (${what || 'its definition'}), so it cannot be called until an operator accepts the new one.`;
  return deny('lookup', 'TOOL_DEFINITION_CHANGED', message, 'An admin can review it with `toolgate tools held` and accept it with `toolgate tools accept`.', {
    changed: members,
    digest: held.declared.digest,
  });
}

/** A source's state as words, e.g. `is restarting (attempt 3)`. */
function stateText(status: ToolSourceStatus | undefined): string {
  switch (status?.state) {
    case 'starting':
      return 'is starting';
    case 'restarting':
      return `is restarting (attempt ${status.attempt})`;
    case 'stopped':
      return 'is stopped';
    case 'up':
      return 'was not available';
    default:
      return 'has failed and is not being restarted';
  }
}

/** The tool among `all` whose alias `name` is, if the caller may use it (`mine`) and the alias is unambiguous. */
function byAlias(name: string, all: readonly ToolDefinition[], mine: readonly string[]): ToolDefinition | undefined {
  // Most unknown names are typos; only one shaped like an alias costs a walk over the caller's tools.
  if (!ALIAS_SHAPE.test(name)) return undefined;
  const registered = new Set(all.map((d) => d.manifest.name));
  const real = resolveAlias(mine, name, (n) => registered.has(n));
  return real === undefined ? undefined : all.find((d) => d.manifest.name === real);
}

/**
 * A refusal of a call made by an alias, worded with the name the caller sent: a model that only
 * knows the alias must recognise its own call. Every gate quotes the tool as `'<name>'`, so the
 * real name in quotes is swapped for the alias; the audit still records the real name.
 */
export function namedAsSent(call: Call, denial: Denial): Denial {
  const sent = call.request.tool;
  const real = call.tool?.manifest.name;
  if (real === undefined || typeof sent !== 'string' || sent === real) return denial;
  const swap = (text: string) => text.split(`'${real}'`).join(`'${sent}'`);
  return { ...denial, message: swap(denial.message), ...(denial.hint === undefined ? {} : { hint: swap(denial.hint) }) };
}
