import type { ToolDefinition } from '@toolgate/contracts';
import { editFileTool } from './edit-file.tool.js';
import { globTool } from './glob.tool.js';
import { grepTool } from './grep.tool.js';
import { listDirTool } from './list-dir.tool.js';
import { readFileTool } from './read-file.tool.js';
import { writeFileTool } from './write-file.tool.js';

export { readFileTool, readFileManifest, MAX_READ_BYTES } from './read-file.tool.js';
export { writeFileTool, writeFileManifest, MAX_WRITE_BYTES } from './write-file.tool.js';
export { editFileTool, editFileManifest } from './edit-file.tool.js';
export { listDirTool, listDirManifest } from './list-dir.tool.js';
export { globTool, globManifest } from './glob.tool.js';
export { grepTool, grepManifest } from './grep.tool.js';
export { Workspace } from './workspace.js';

/** Every workspace file tool, ready to register: tier 0, `filesystem`/`workspace` permission. */
export const workspaceFileTools: ToolDefinition[] = [readFileTool, writeFileTool, editFileTool, globTool, grepTool, listDirTool];
