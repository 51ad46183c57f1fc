export { MemoryApprovalStore } from './memory-approval-store.js';
export { MemoryBudgetStore } from './memory-budget-store.js';
export { MemorySettingsStore } from './memory-settings-store.js';
export { MemoryMessageBus } from './memory-message-bus.js';
export { MemoryToolPinStore } from './memory-tool-pin-store.js';
