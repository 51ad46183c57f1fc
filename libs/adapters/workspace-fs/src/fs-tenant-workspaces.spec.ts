import { testTenantWorkspaces } from '@toolgate/testing';
import { describe } from 'vitest';
import { FsTenantWorkspaces } from './fs-tenant-workspaces.js';

describe('FsTenantWorkspaces', () => testTenantWorkspaces((root) => new FsTenantWorkspaces(root)));
