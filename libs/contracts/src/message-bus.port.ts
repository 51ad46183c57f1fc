import { token, type Token } from './token.js';

/** A message as stored on the bus. `body` is the wire form (an AS2 JSON document or plain text). */
export interface BusMessage {
  /** Unique id the publisher gave the message. */
  readonly id: string;
  /** Position on the tenant's bus: strictly increasing in publish order (not necessarily contiguous). */
  readonly seq: number;
  /** The tenant whose bus carries it. */
  readonly tenant: string;
  /** The channel it was published on, e.g. a team or a topic name. */
  readonly channel: string;
  /** The principal that published it, as authenticated by the gateway (not taken from the body). */
  readonly sender: string;
  /** The wire form: an AS2 JSON document or plain text, stored as given. */
  readonly body: string;
  /** Epoch milliseconds. */
  readonly publishedAt: number;
}

/**
 * A per-tenant message bus. No call ever sees another tenant's messages.
 *
 * Each reader has a cursor per channel: a message is unread by a reader until a `readNew` of
 * that reader has returned it. `readNew` returns the reader's oldest unread messages in the
 * requested channels in `seq` order, at most `limit`, and marks exactly those as read, so a
 * limited or channel-filtered read never skips a message that a later read would otherwise
 * return. The read and the cursor move are one atomic step: two concurrent reads by the same
 * reader never return the same message.
 */
export interface MessageBus {
  /** Appends a message to its tenant's bus and returns it with its `seq`; durable on resolve. */
  publish(message: Omit<BusMessage, 'seq'>): Promise<BusMessage>;
  /** The reader's oldest unread messages (see above), marking exactly those as read. */
  readNew(
    tenant: string,
    reader: string,
    options: {
      /** Only these channels; every channel of the tenant when absent. An empty list reads nothing. */
      readonly channels?: readonly string[];
      /** At most this many messages (a positive integer). */
      readonly limit: number;
    },
  ): Promise<readonly BusMessage[]>;
}
/** The tenants' message bus; `apps/server` binds it by `TOOLGATE_STORE` (SQLite either way today). */
export const MessageBusToken: Token<MessageBus> = token('MessageBus');
