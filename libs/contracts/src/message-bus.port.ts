import { token, type Token } from './token.js';

/** A message as stored on the bus. `body` is the wire form (an AS2 JSON document or plain text). */
export interface BusMessage {
  readonly id: string;
  /** Position on the tenant's bus, increasing. */
  readonly seq: number;
  readonly tenant: string;
  readonly channel: string;
  readonly sender: string;
  readonly body: string;
  readonly publishedAt: number;
}

/**
 * A per-tenant message bus. Each reader has a cursor: `readNew` returns what that reader has not
 * read yet, oldest first, and advances the cursor past what it returned. No cross-tenant reads.
 */
export interface MessageBus {
  publish(message: Omit<BusMessage, 'seq'>): Promise<BusMessage>;
  readNew(
    tenant: string,
    reader: string,
    options: { readonly channel?: string; readonly limit: number },
  ): Promise<readonly BusMessage[]>;
}
export const MessageBusToken: Token<MessageBus> = token('MessageBus');
