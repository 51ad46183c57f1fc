import type { AuditEvent, AuditReceipt } from '@toolgate/contracts';
import { prepareEvent } from './frame-codec.js';

/** One queued append: its prepared event and its caller's promise. */
export interface PendingAppend {
  readonly event: AuditEvent;
  readonly resolve: (receipt: AuditReceipt) => void;
  readonly reject: (error: Error) => void;
}

/** How a sink makes one batch durable. */
export interface GroupCommitOptions {
  /** Most appends committed together. */
  readonly maxBatch: number;
  /** Makes `batch` durable and settles every append in it. */
  commit(batch: PendingAppend[]): Promise<void>;
  /** Settles `batch` after `commit` threw (its state is then unknown to the queue). */
  onCommitError(batch: PendingAppend[], error: unknown): void;
  /** Checked before each batch: an error here refuses everything still queued. */
  refusal?(): Error | undefined;
}

/**
 * Group commit, shared by both audit sinks: appends queued while one batch is being made durable
 * go out together in the next batch (one write + `fdatasync`, or one transaction), and each
 * caller's promise settles only when its batch has.
 */
export class GroupCommitQueue {
  readonly #queue: PendingAppend[] = [];
  #flushing: Promise<void> | undefined;

  constructor(private readonly options: GroupCommitOptions) {}

  /** Validates, redacts and caps `event` (`prepareEvent`), then queues it for the next batch. */
  enqueue(event: AuditEvent): Promise<AuditReceipt> {
    let prepared: AuditEvent;
    try {
      prepared = prepareEvent(event);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AuditReceipt>((resolve, reject) => {
      this.#queue.push({ event: prepared, resolve, reject });
      this.#flushing ??= this.#flushLoop();
    });
  }

  /** Resolves once nothing is queued or being committed. */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #flushLoop(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        // Let every caller that is about to append (promise continuations, timers due now) queue
        // up first, so one commit serves all of them.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const refused = this.options.refusal?.();
        if (refused) {
          for (const pending of this.#queue.splice(0)) pending.reject(refused);
          break;
        }
        const batch = this.#queue.splice(0, this.options.maxBatch);
        try {
          await this.options.commit(batch);
        } catch (error) {
          // Settling an already-settled promise is a no-op, so every caller hears exactly once.
          this.options.onCommitError(batch, error);
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }
}
