import type { Grant, Permission } from '@toolgate/contracts';
import { deny, toolOf, type CallGate } from '../call.js';

/**
 * Gate 5: every permission the manifest asks for is granted, by the call itself or by the
 * tenant's standing grants: same type, and the exact scope or `*`.
 */
export const permissionsGate: CallGate = {
  name: 'permissions',
  check(call) {
    const needed = toolOf(call).manifest.permissions;
    if (needed.length === 0) return undefined;
    const grants = [...validGrants(call.request.grants), ...(call.tenant?.grants ?? [])];
    const missing = needed.filter((p) => !grants.some((g) => covers(g, p)));
    if (missing.length === 0) return undefined;
    const names = missing.map((p) => `${p.type}:${p.scope}`).join(', ');
    return deny(
      'permissions',
      'PERMISSION_NOT_GRANTED',
      `'${toolOf(call).manifest.name}' needs permissions this call was not granted: ${names}.`,
      `Grant them on the call, e.g. grants: ${JSON.stringify(missing.map(({ type, scope }) => ({ type, scope })))}, or ask an operator to add them to the tenant's standing grants.`,
      { missing: missing.map(({ type, scope }) => ({ type, scope })) },
    );
  },
};

function covers(grant: Grant, permission: Permission): boolean {
  return grant.type === permission.type && (grant.scope === permission.scope || grant.scope === '*');
}

/** Malformed grants (from a client that skipped validation) grant nothing. */
function validGrants(grants: unknown): Grant[] {
  if (!Array.isArray(grants)) return [];
  return grants.filter((g): g is Grant => typeof g === 'object' && g !== null && typeof g.type === 'string' && typeof g.scope === 'string');
}
