import { BuiltInRoles, type Principal } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';

/** Whether the principal holds a built-in capability role. */
export function holds(principal: Principal, role: keyof typeof BuiltInRoles): boolean {
  return principal.roles.includes(BuiltInRoles[role]);
}

/** Throws FORBIDDEN unless the principal holds the role. */
export function requireRole(principal: Principal, role: keyof typeof BuiltInRoles, action: string): void {
  if (!holds(principal, role)) {
    throw new GatewayError('FORBIDDEN', `Only a principal with the '${BuiltInRoles[role]}' role may ${action}; ${principal.id} does not hold it.`);
  }
}

/** Runs a store operation; a failing store is UNAVAILABLE to the caller, never a raw error. */
export async function fromStore<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new GatewayError('UNAVAILABLE', `The gateway could not ${what} (its state is unavailable); try again later.`);
  }
}
