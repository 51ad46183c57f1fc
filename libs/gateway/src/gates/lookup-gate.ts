import type { Denial, ToolDefinition } from '@toolgate/contracts';
import type { Call, CallGate } from '../call.js';
import { closestNames } from '../denials/closest-names.js';
import { deny } from '../denials/deny.js';
import type { ToolAccess } from '../registry/tool-access.js';
import { ALIAS_SHAPE, resolveAlias } from '../registry/tool-exports.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

/** What the lookup gate reads: the registered tools, and which of them the caller may use (for suggestions and aliases). */
export interface LookupNeeds {
  readonly registry: Pick<ToolRegistry, 'get' | 'list'>;
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
  return {
    name: 'lookup',
    check(call) {
      const { tool: name, version } = call.request;
      let tool = typeof name === 'string' ? registry.get(name) : undefined;
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
    },
  };

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
