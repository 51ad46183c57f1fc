import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The kit is copied, not imported (adapters depend only on contracts); this keeps the copy exact.
const here = fileURLToPath(new URL('.', import.meta.url));
const original = join(here, '../../executor-subprocess/src/process-kit');
const copy = join(here, 'process-kit');

describe('process-kit copy', () => {
  it('is identical to the original in executor-subprocess', () => {
    expect(readdirSync(copy).sort()).toEqual(readdirSync(original).sort());
    for (const file of readdirSync(original)) {
      expect(readFileSync(join(copy, file), 'utf8'), file).toBe(readFileSync(join(original, file), 'utf8'));
    }
  });
});
