import { describe, expect, it } from 'vitest';
import { filling, MAX_ARGS_ARRAY_BYTES } from './filling.js';

describe('filling an argument array to the size bound', () => {
  it('fits as many values as the bound allows and no more', () => {
    const values = filling((i) => i);
    expect(JSON.stringify(values).length).toBeLessThanOrEqual(MAX_ARGS_ARRAY_BYTES);
    expect(JSON.stringify([...values, values.length]).length).toBeGreaterThan(MAX_ARGS_ARRAY_BYTES);
    expect(filling(() => 'x', 3)).toEqual(['x', 'x', 'x']);
  });
});
