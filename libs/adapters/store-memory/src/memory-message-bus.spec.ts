import { testMessageBus } from '@toolgate/testing';
import { describe } from 'vitest';
import { MemoryMessageBus } from './memory-message-bus.js';

describe('MemoryMessageBus', () => {
  testMessageBus(async () => ({ bus: new MemoryMessageBus() }));
});
