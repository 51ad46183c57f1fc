import { deny, toolOf, type CallGate } from '../call.js';

/**
 * Gate 2: the tenant allows the tool and one of the principal's roles grants it. A refusal says
 * which tools the caller does have and who in its tenant could make the call instead, so an
 * agent can delegate rather than retry.
 */
export const allowGate: CallGate = {
  name: 'allow',
  check(call, { deps, access }) {
    const { principal } = call;
    const name = toolOf(call).manifest.name;
    const tenant = deps.directory.tenant(principal.tenant);
    if (tenant && access.mayUse(principal, name, tenant)) {
      call.tenant = tenant;
      return undefined;
    }
    const mine = access.toolsOf(principal, deps.registry.list());
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
