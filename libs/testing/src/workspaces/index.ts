export { testTenantWorkspaces, HOSTILE_TENANT_NAMES, type WorkspacesFactory } from './tenant-workspaces.contract.js';
