import type { Principal } from '@toolgate/contracts';

/**
 * What every procedure sees. It holds no HTTP request, so tests call procedures through
 * `createCallerFactory` with a principal and nothing else.
 */
export interface ApiContext {
  /** The authenticated caller, or undefined when the bearer token was missing or wrong. */
  readonly principal?: Principal;
  /**
   * Why there is no principal when a token was sent: it was refused (answered UNAUTHORIZED with
   * the reason), or could not be checked now (SERVICE_UNAVAILABLE). Absent when none was sent.
   */
  readonly credentialProblem?: { readonly outcome: 'refused' | 'unavailable'; readonly reason: string };
}

export function createContextInner(options: { principal?: Principal; credentialProblem?: ApiContext['credentialProblem'] }): ApiContext {
  if (options.principal) return { principal: options.principal };
  return options.credentialProblem ? { credentialProblem: options.credentialProblem } : {};
}
