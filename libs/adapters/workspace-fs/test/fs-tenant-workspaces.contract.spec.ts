import { testTenantWorkspaces } from '@toolgate/testing';
import { describe } from 'vitest';
import { FsTenantWorkspaces } from '../src/index.js';

describe('FsTenantWorkspaces', () => testTenantWorkspaces((root) => new FsTenantWorkspaces(root)));
