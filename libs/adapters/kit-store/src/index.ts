/**
 * The store kit: the input rules and pure decisions the state stores (memory, SQLite,
 * PostgreSQL) must share, so that a value one store accepts every store accepts, and every store
 * answers the same question the same way (ADR 0040). Only logic lives here; each store keeps its
 * own SQL (or map) and its own atomicity.
 */
export { checkDecision, consumeProblem, decideProblem, requireListLimit, type CheckedDecision } from './approval-rules.js';
export { budgetWindow, type BudgetWindow } from './budget-window.js';
export { checkBusMessage, checkBusRead, publishedMessage } from './bus-message.js';
export { normaliseEgress, withHost } from './egress-settings.js';
export { isStorableText, jsonObjectText, requireInteger, requireName, requireText } from './text-rules.js';
export {
  checkToolPin,
  isPinnableToolName,
  requirePinDigest,
  sha256Digest,
  MAX_PIN_BY_LENGTH,
  MAX_PIN_DEFINITION_BYTES,
  MAX_PIN_DEFINITION_DEPTH,
  MAX_PIN_TOOL_LENGTH,
} from './tool-pin-rules.js';
