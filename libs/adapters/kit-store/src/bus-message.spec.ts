import type { BusMessage } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { checkBusMessage, checkBusRead, publishedMessage } from './bus-message.js';

const message: Omit<BusMessage, 'seq'> = { id: 'm-1', tenant: 'tenant-a', channel: 'ops', sender: 'worker-1', body: '', publishedAt: 1 };

describe('checkBusMessage', () => {
  it('accepts a message with an empty body', () => {
    expect(() => checkBusMessage(message)).not.toThrow();
  });

  it.each(['id', 'tenant', 'channel', 'sender'] as const)('refuses an empty %s', (field) => {
    expect(() => checkBusMessage({ ...message, [field]: '' })).toThrow(new TypeError(`${field} must not be empty`));
  });

  it('refuses an unstorable body and a non-integer time', () => {
    expect(() => checkBusMessage({ ...message, body: 'a\u0000' })).toThrow('body must be well-formed Unicode text');
    expect(() => checkBusMessage({ ...message, publishedAt: 1.5 })).toThrow('publishedAt must be an integer');
  });
});

describe('publishedMessage', () => {
  it('keeps the port fields only and adds the position on the bus', () => {
    const withExtra = { ...message, secret: 'not stored', seq: 99 } as Omit<BusMessage, 'seq'>;
    const stored = publishedMessage(withExtra, 7);
    expect(stored).toEqual({ ...message, seq: 7 });
    expect(Object.keys(stored).sort()).toEqual(['body', 'channel', 'id', 'publishedAt', 'sender', 'seq', 'tenant']);
  });
});

describe('checkBusRead', () => {
  it('accepts named readers and a positive limit', () => {
    expect(() => checkBusRead('tenant-a', 'reader', 1)).not.toThrow();
  });

  it('refuses empty names and a limit below one', () => {
    expect(() => checkBusRead('', 'reader', 1)).toThrow('tenant must not be empty');
    expect(() => checkBusRead('tenant-a', '', 1)).toThrow('reader must not be empty');
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => checkBusRead('tenant-a', 'reader', bad)).toThrow(new RangeError('limit must be a positive integer'));
    }
  });
});
