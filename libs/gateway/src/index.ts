export { Gateway } from './gateway.js';
export type { GatewayDeps } from './gateway-deps.js';
export { DEFAULT_LIMITS, type GatewayLimits } from './limits.js';
export { GatewayError, type GatewayErrorCode } from './denials/gateway-error.js';
export { ToolRegistry, type RejectedTool } from './registry/tool-registry.js';
export type { HeldTool, ToolSourceReport } from './desks/tool-pin-desk.js';
export type { DefinitionChange } from './registry/tool-changes.js';
export { checkToolDefinition, type ToolTrust } from './registry/manifest-rules.js';
export {
  ALIAS_SHAPE,
  TOOL_EXPORT_FORMATS,
  TOOL_NAME_RULES,
  aliasOf,
  closedSchema,
  exportName,
  exportTools,
  findVisibleTool,
  toMcpTool,
  toolHints,
  toolTitle,
  type AnthropicToolDefinition,
  type McpToolDefinition,
  type OpenAiToolDefinition,
  type ToolAlias,
  type ToolExport,
  type ToolExportFormat,
  type ToolHints,
  type VendorFormat,
  type WithheldTool,
} from './registry/tool-exports.js';
export type { ApprovalReadOptions, ApprovalRequestResult, ApprovalView } from './desks/approval-desk.js';
export { APPROVAL_FILES_NOTE, NAMED_FILE_LIMITS, type NamedFile } from './desks/named-files.js';
export type { TenantAuditReport } from './desks/audit-access.js';
export { MAX_ARGS_DEPTH, MAX_ARGS_VALUES, jsonBoundsProblem, maxValuesWithin, nestedWithin, type JsonBounds, type JsonBoundsProblem } from './schema/nesting.js';
export { normalizeEgressHost } from './egress/egress-host.js';
export { canonicalJson, payloadDigest, argsDigest, type ApprovalPayload } from './audit/canonical-json.js';
