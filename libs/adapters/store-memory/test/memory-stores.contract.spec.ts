import { testApprovalStore, testBudgetStore, testSettingsStore, testToolPinStore } from '@toolgate/testing';
import { describe } from 'vitest';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore, MemoryToolPinStore } from '../src/index.js';

describe('MemoryApprovalStore', () => testApprovalStore(async () => ({ store: new MemoryApprovalStore() })));
describe('MemoryBudgetStore', () => testBudgetStore(async () => ({ store: new MemoryBudgetStore() })));
describe('MemorySettingsStore', () => testSettingsStore(async () => ({ store: new MemorySettingsStore() })));
// Only the one suite: a memory store's state is its instance, so there is no second instance
// on the same data to race against or to reopen (testToolPinStoreAcrossInstances).
describe('MemoryToolPinStore', () => testToolPinStore(async () => ({ store: new MemoryToolPinStore() })));
