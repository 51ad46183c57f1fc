import type { Principal } from './principal.js';

/**
 * The OAuth scopes Toolgate reads from a token when the operator turns them on (ADR 0075): each
 * names a set of calls. `tools:read` lists and explains tools and reads approvals and `whoami`;
 * `tools:call` invokes tools and asks for approvals; `approvals:decide` decides approvals;
 * `toolgate:admin` changes settings, reads the audit and accepts changed tool definitions.
 * Roles still decide what the principal may do: a scope only narrows what this token may ask.
 */
export const TOOLGATE_SCOPES = ['tools:read', 'tools:call', 'approvals:decide', 'toolgate:admin'] as const;

/** One of {@link TOOLGATE_SCOPES}. */
export type ToolgateScope = (typeof TOOLGATE_SCOPES)[number];

/** Whether the principal's token allows calls of `scope`: always, when its scopes are not checked. */
export function allowsScope(principal: Principal, scope: ToolgateScope): boolean {
  return principal.scopes === undefined || principal.scopes.includes(scope);
}
