export { FsTenantWorkspaces } from './fs-tenant-workspaces.js';
