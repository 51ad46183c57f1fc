import type { JsonSchema, Permission, ToolManifest } from '@toolgate/contracts';

/** The behaviour hints MCP clients use to warn their users (MCP `ToolAnnotations`). */
export interface ToolHints {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly openWorldHint: boolean;
}

/** One entry of an MCP `tools/list` result, built from a manifest. */
export interface McpToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly annotations: ToolHints & { readonly title: string };
}

/** Permission scopes that only read; any other scope may change something. */
const READ_SCOPES = new Set(['read']);

function onlyReads(permissions: readonly Permission[]): boolean {
  return permissions.every((p) => READ_SCOPES.has(p.scope));
}

/**
 * Maps a manifest's risk and permissions onto MCP's hints (ADR 0049). A hint only ever errs
 * towards a warning: the manifest says what authority a tool needs, not what it does with it, so
 * a tool is called read-only only when its permissions prove it.
 *
 * - `readOnlyHint`: risk `low` and every permission is a `read` scope (or there are none).
 * - `destructiveHint`: not read-only, and risk `high`/`critical` or an `exec` or `filesystem`
 *   permission (a shell, or a write into the workspace, can overwrite or delete).
 * - `openWorldHint`: a `network` permission, an egress spec, or a tool of an upstream MCP server.
 */
export function toolHints(manifest: ToolManifest): ToolHints {
  const readOnly = manifest.risk === 'low' && onlyReads(manifest.permissions);
  const destructive =
    !readOnly &&
    (manifest.risk === 'high' || manifest.risk === 'critical' || manifest.permissions.some((p) => p.type === 'exec' || p.type === 'filesystem'));
  const openWorld =
    manifest.permissions.some((p) => p.type === 'network') || manifest.egress !== undefined || manifest.provenance.startsWith('mcp:');
  return { readOnlyHint: readOnly, destructiveHint: destructive, openWorldHint: openWorld };
}

/**
 * A human-readable title from the snake_case name: `read_file` → `Read file`, and an upstream
 * MCP tool `<server>__<tool>` → `server: Tool`.
 */
export function toolTitle(name: string): string {
  const words = (part: string) => part.replace(/_+/g, ' ').trim();
  const sentence = (part: string) => {
    const text = words(part);
    return text.charAt(0).toUpperCase() + text.slice(1);
  };
  const split = name.indexOf('__');
  if (split > 0) return `${words(name.slice(0, split))}: ${sentence(name.slice(split + 2))}`;
  return sentence(name);
}

/** The MCP definition of one tool: the same name, description and schemas `tools.list` shows. */
export function toMcpTool(manifest: ToolManifest): McpToolDefinition {
  const title = toolTitle(manifest.name);
  return {
    name: manifest.name,
    title,
    description: manifest.description,
    inputSchema: manifest.input,
    outputSchema: manifest.output,
    annotations: { title, ...toolHints(manifest) },
  };
}
