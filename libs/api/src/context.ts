import type { Principal } from '@toolgate/contracts';

/**
 * What every procedure sees. It holds no HTTP request, so tests call procedures through
 * `createCallerFactory` with a principal and nothing else.
 */
export interface ApiContext {
  /** The authenticated caller, or undefined when the bearer token was missing or wrong. */
  readonly principal?: Principal;
}

export function createContextInner(options: { principal?: Principal }): ApiContext {
  return options.principal ? { principal: options.principal } : {};
}
