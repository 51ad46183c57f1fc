import type { Gate } from '@toolgate/contracts';
import { deny } from './deny.js';

/** The refusal when a gate could not read or write the state it needs: the call fails closed. */
export function stateUnavailable(gate: Gate) {
  return deny(
    gate,
    'STATE_UNAVAILABLE',
    `The gateway could not check the ${gate} gate (its state is unavailable), so the call was refused.`,
    'Try again later; an operator can check the gateway with health.',
  );
}
