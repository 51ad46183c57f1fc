import { describe, expect, it } from 'vitest';
import { HOST_LISTENER_GREETING, startHostListener } from './host-listener.js';

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
