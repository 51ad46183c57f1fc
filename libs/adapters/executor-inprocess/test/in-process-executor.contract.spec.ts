import { testExecutor } from '@toolgate/testing';
import { describe } from 'vitest';
import { InProcessExecutor } from '../src/index.js';

describe('InProcessExecutor (tier 0) against the executor contract', () => {
  testExecutor({ tier: 'inprocess', create: () => new InProcessExecutor() });
});
