import type { PrincipalDirectory } from '@toolgate/contracts';
import { toolOf, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import type { ToolAccess } from '../registry/tool-access.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

/** What the allow gate reads: the tenant's policy, who may use what, and (for the hint) the tools. */
export interface AllowNeeds {
  readonly directory: Pick<PrincipalDirectory, 'tenant'>;
  readonly access: Pick<ToolAccess, 'mayUse' | 'toolsOf' | 'holdersOf'>;
  readonly registry: Pick<ToolRegistry, 'list'>;
}

/**
 * Gate 2: the tenant allows the tool and one of the principal's roles grants it. A refusal says
 * which tools the caller does have and who in its tenant could make the call instead, so an
 * agent can delegate rather than retry.
 */
export function allowGate({ directory, access, registry }: AllowNeeds): CallGate {
  return {
    name: 'allow',
    check(call) {
      const { principal } = call;
      const name = toolOf(call).manifest.name;
      const tenant = directory.tenant(principal.tenant);
      if (tenant && access.mayUse(principal, name, tenant)) {
        call.tenant = tenant;
        return undefined;
      }
      const mine = access.toolsOf(principal, registry.list());
      const holders = access.holdersOf(principal, name);
      const hint =
        `You (${principal.id}) cannot use '${name}'. ` +
        `Your tools: ${mine.length > 0 ? mine.join(', ') : 'none'}. ` +
        (holders.length > 0 ? `To use '${name}', delegate to: ${holders.join(', ')}.` : 'No principal of your tenant holds it.');
      const message = tenant
        ? `'${name}' is not allowed for ${principal.id}.`
        : `'${name}' is not allowed: tenant '${principal.tenant}' is not configured, so it allows no tools.`;
      return deny('allow', 'TOOL_NOT_ALLOWED', message, hint, { tools: mine, delegates: holders });
    },
  };
}
