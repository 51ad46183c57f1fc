import { testExecutor } from '@toolgate/testing';
import { describe } from 'vitest';
import { SubprocessExecutor } from '../src/index.js';

describe('SubprocessExecutor (tier 1, unisolated)', () => {
  testExecutor({ tier: 'unisolated', create: () => new SubprocessExecutor() });
});
