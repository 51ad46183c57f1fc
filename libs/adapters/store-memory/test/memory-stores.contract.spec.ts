import { testApprovalStore, testBudgetStore, testSettingsStore } from '@toolgate/testing';
import { describe } from 'vitest';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '../src/index.js';

describe('MemoryApprovalStore', () => testApprovalStore(async () => ({ store: new MemoryApprovalStore() })));
describe('MemoryBudgetStore', () => testBudgetStore(async () => ({ store: new MemoryBudgetStore() })));
describe('MemorySettingsStore', () => testSettingsStore(async () => ({ store: new MemorySettingsStore() })));
