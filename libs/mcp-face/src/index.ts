export { createMcpFace, type McpFace, type McpFaceGateway, type McpFaceOptions } from './mcp-face.js';
export { denialResult, denialText, successResult, toCallToolResult, type ToolCallResult } from './denial-result.js';
export { toMcpTool, toolHints, toolTitle, type McpToolDefinition, type ToolHints } from './tool-definitions.js';
export { DEFAULT_PAGE_SIZE, InvalidCursorError, pageOfTools, type ToolPage } from './tool-pages.js';
