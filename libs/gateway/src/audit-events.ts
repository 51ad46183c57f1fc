import type { AuditEvent, AuditEventKind, Denial } from '@toolgate/contracts';
import { argsDigestOf, type Call, type Runtime } from './call.js';

const MAX_NAME = 128;

/**
 * The audit event of one moment of a call. Carries the digest of the accepted arguments, never
 * the arguments; the repair descriptions name arguments, not their values.
 */
export function callEvent(call: Call, runtime: Runtime, event: AuditEventKind, extra: Partial<AuditEvent> = {}): AuditEvent {
  const now = runtime.deps.clock.now();
  const manifest = call.tool?.manifest;
  const digest = argsDigestOf(call);
  return {
    event,
    ts: new Date(now).toISOString(),
    callId: call.callId,
    tenant: call.principal.tenant,
    principal: call.principal.id,
    tool: manifest?.name ?? String(call.request.tool).slice(0, MAX_NAME),
    ...(manifest ? { version: manifest.version } : typeof call.request.version === 'string' ? { version: call.request.version.slice(0, MAX_NAME) } : {}),
    durationMs: Math.max(0, now - call.startedAt),
    ...(digest ? { argsDigest: digest } : {}),
    ...(call.approval ? { approvedBy: call.approval.approvedBy, approvalReason: call.approval.reason } : {}),
    ...(call.repaired.length > 0 ? { repaired: call.repaired.map((r) => r.detail) } : {}),
    ...extra,
  };
}

/** The record of a refusal. */
export function denialEvent(call: Call, runtime: Runtime, denial: Denial): AuditEvent {
  return callEvent(call, runtime, 'denied', { gate: denial.gate, code: denial.code });
}
