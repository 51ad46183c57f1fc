import { describe, expect, it } from 'vitest';
import { HOST_LISTENER_GREETING, startHostListener } from './host-listener.js';
import { filling, MAX_ARGS_ARRAY_BYTES } from '../payloads/filling.js';

describe('the host listener sandbox tests aim at', () => {
  it('greets every connection and counts it', async () => {
    const listener = await startHostListener();
    try {
      expect(listener.connections()).toBe(0);
      expect(await listener.greetingFromHost()).toBe(HOST_LISTENER_GREETING);
      expect(await listener.greetingFromHost()).toBe(HOST_LISTENER_GREETING);
      expect(listener.connections()).toBe(2);
    } finally {
      await listener.close();
    }
  });
});

describe('filling an argument array to the size bound', () => {
  it('fits as many values as the bound allows and no more', () => {
    const values = filling((i) => i);
    expect(JSON.stringify(values).length).toBeLessThanOrEqual(MAX_ARGS_ARRAY_BYTES);
    expect(JSON.stringify([...values, values.length]).length).toBeGreaterThan(MAX_ARGS_ARRAY_BYTES);
    expect(filling(() => 'x', 3)).toEqual(['x', 'x', 'x']);
  });
});
