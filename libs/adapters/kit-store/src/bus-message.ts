import type { BusMessage } from '@toolgate/contracts';
import { requireInteger, requireName, requireText } from './text-rules.js';

/** Checks a message before it is published: non-empty names, storable body, integer time. */
export function checkBusMessage(message: Omit<BusMessage, 'seq'>): void {
  for (const field of ['id', 'tenant', 'channel', 'sender'] as const) requireName(field, message[field]);
  requireText('body', message.body);
  requireInteger('publishedAt', message.publishedAt);
}

/**
 * The message as the bus keeps and returns it: the port's fields only (extra properties on the
 * caller's object are neither stored nor echoed) and its position on the bus.
 */
export function publishedMessage(message: Omit<BusMessage, 'seq'>, seq: number): BusMessage {
  return {
    id: message.id,
    tenant: message.tenant,
    channel: message.channel,
    sender: message.sender,
    body: message.body,
    publishedAt: message.publishedAt,
    seq,
  };
}

/** Checks a `readNew` request: who reads on which tenant's bus, and a positive page size. */
export function checkBusRead(tenant: string, reader: string, limit: number): void {
  requireName('tenant', tenant);
  requireName('reader', reader);
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
}
