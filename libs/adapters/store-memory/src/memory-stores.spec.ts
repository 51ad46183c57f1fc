import { testApprovalStore, testBudgetStore, testSettingsStore } from '@toolgate/testing';
import { describe } from 'vitest';
import { MemoryApprovalStore } from './memory-approval-store.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { MemorySettingsStore } from './memory-settings-store.js';

describe('MemoryApprovalStore', () => testApprovalStore(async () => ({ store: new MemoryApprovalStore() })));
describe('MemoryBudgetStore', () => testBudgetStore(async () => ({ store: new MemoryBudgetStore() })));
describe('MemorySettingsStore', () => testSettingsStore(async () => ({ store: new MemorySettingsStore() })));
