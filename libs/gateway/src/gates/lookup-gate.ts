import type { CallGate } from '../call.js';
import { closestNames } from '../denials/closest-names.js';
import { deny } from '../denials/deny.js';
import type { ToolAccess } from '../registry/tool-access.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

/** What the lookup gate reads: the registered tools, and which of them the caller may use (for suggestions). */
export interface LookupNeeds {
  readonly registry: Pick<ToolRegistry, 'get' | 'list'>;
  readonly access: Pick<ToolAccess, 'toolsOf'>;
}

/**
 * Gate 1: the tool exists, at the version the caller pinned. Suggestions for an unknown name
 * come only from tools the caller may use, so a typo never reveals another role's tools.
 */
export function lookupGate({ registry, access }: LookupNeeds): CallGate {
  return {
    name: 'lookup',
    check(call) {
      const { tool: name, version } = call.request;
      const tool = typeof name === 'string' ? registry.get(name) : undefined;
      if (!tool) {
        const shown = typeof name === 'string' ? name.slice(0, 64) : String(name);
        const mine = access.toolsOf(call.principal, registry.list());
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
          `'${tool.manifest.name}' is pinned at version ${tool.manifest.version}, not ${String(version).slice(0, 32)}.`,
          `Call it with version '${tool.manifest.version}' (and check its manifest with tools.list: it may have changed).`,
          { version: tool.manifest.version },
        );
      }
      call.tool = tool;
      return undefined;
    },
  };
}
