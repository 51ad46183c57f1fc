export { createMcpFace, type McpFace, type McpFaceOptions } from './mcp-face.js';
export type { McpFaceGateway } from './face-gateway.js';
export { denialResult, denialText, successResult, toCallToolResult, type ToolCallResult } from './denial-result.js';
export { toMcpTool, toolHints, toolTitle, type McpToolDefinition, type ToolHints } from './tool-definitions.js';
export { DEFAULT_PAGE_SIZE, InvalidCursorError, pageOfTools, type ToolPage } from './tool-pages.js';
export { callerOf, capabilitySubset, type CallerClient } from './client-session.js';
export { APPROVAL_META_KEY, DEFAULT_APPROVAL_WAIT_MS, MAX_APPROVAL_ID_LENGTH, MAX_HELD_PER_PRINCIPAL } from './approval-flow.js';
export { MIN_KEY_BYTES, SignedTokens, type TokenCheck, type TokenProblem } from './signed-token.js';
