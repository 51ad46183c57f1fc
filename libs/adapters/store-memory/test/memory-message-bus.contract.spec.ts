import { testMessageBus } from '@toolgate/testing';
import { describe } from 'vitest';
import { MemoryMessageBus } from '../src/index.js';

describe('MemoryMessageBus', () => {
  testMessageBus(async () => ({ bus: new MemoryMessageBus() }));
});
