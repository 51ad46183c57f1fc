import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { TenantWorkspacesToken } from '@toolgate/contracts';
import { ConfigToken } from '../tokens.js';
import type { Binder } from './binder.js';

/**
 * Port `TenantWorkspaces`: each tenant's directory below `TOOLGATE_WORKSPACE_ROOT`, made on first
 * use. One adapter, so no setting chooses it; it holds nothing open. (MCP servers' own
 * directories, `_mcp/<name>`, are made by the MCP binding: no tenant name can start with `_`.)
 */
export function bindWorkspaces(binder: Binder): void {
  binder.resolved(TenantWorkspacesToken, { config: ConfigToken }, ({ config }) => new FsTenantWorkspaces(config.workspaceRoot));
}
