export { Gateway } from './gateway.js';
export { DEFAULT_LIMITS, type GatewayDeps, type GatewayLimits } from './gateway-deps.js';
export { GatewayError, type GatewayErrorCode } from './gateway-error.js';
export { ToolRegistry, type RejectedTool } from './tool-registry.js';
export type { ToolTrust } from './manifest-rules.js';
export type { ApprovalRequestResult } from './approval-desk.js';
export type { TenantAuditReport } from './audit-access.js';
export { normalizeEgressHost } from './egress-host.js';
export { canonicalJson, payloadDigest, argsDigest, type ApprovalPayload } from './canonical-json.js';
