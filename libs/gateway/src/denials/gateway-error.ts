/** Why a gateway operation other than `invoke` was refused; the API layer maps it to a status. */
export type GatewayErrorCode = 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'INVALID' | 'UNAVAILABLE';

/**
 * A refusal of an administrative operation (approvals, settings, audit reads, tool
 * registration). The message is written for the caller and never holds a host path or secret.
 * `invoke` never throws this: its refusals are denials.
 */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
  ) {
    super(message);
  }
}
