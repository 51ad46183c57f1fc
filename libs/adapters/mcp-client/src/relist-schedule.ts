import type { Clock } from '@toolgate/contracts';

/** What a {@link RelistSchedule} runs and when it stops. */
export interface RelistScheduleOptions {
  /** Wait after a `tools/list_changed` before the listing starts. */
  readonly delayMs: number;
  /** Least time from the end of one listing to the start of the next. */
  readonly gapMs: number;
  readonly clock: Clock;
  /** One re-reading of the tools. Its own failures are the source's to log; it should not reject. */
  readonly relist: () => Promise<void>;
  /** Whether the connection this schedule belongs to is no longer the source's live one. */
  readonly gone: () => boolean;
  /** Starts the timer (a remote source starts it outside the call whose stream carried the notification). */
  readonly startTimer?: (start: () => ReturnType<typeof setTimeout>) => ReturnType<typeof setTimeout>;
}

/**
 * When a connection re-reads its server's tools after `tools/list_changed`, for stdio and remote
 * sources alike: after `delayMs`, never sooner than `gapMs` after the previous listing, and one
 * listing at a time; notifications meanwhile owe one more listing, however many came.
 */
export class RelistSchedule {
  readonly #opts: RelistScheduleOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #owed: boolean;
  #lastAt: number;

  /** `owed`: a change was announced before the connection was adopted (see {@link adopted}). */
  constructor(opts: RelistScheduleOptions, owed = false) {
    this.#opts = opts;
    this.#owed = owed;
    this.#lastAt = opts.clock.now();
  }

  /** A `tools/list_changed` arrived. */
  changed(): void {
    if (this.#opts.gone()) return;
    if (this.#running || this.#timer !== undefined) {
      this.#owed = true;
      return;
    }
    const wait = Math.max(this.#opts.delayMs, this.#lastAt + this.#opts.gapMs - this.#opts.clock.now());
    const start = () =>
      setTimeout(() => {
        this.#timer = undefined;
        void this.#run();
      }, wait);
    this.#timer = this.#opts.startTimer ? this.#opts.startTimer(start) : start();
    this.#timer.unref?.();
  }

  /** The connection was adopted: a change announced before that is re-read now. */
  adopted(): void {
    if (!this.#owed) return;
    this.#owed = false;
    this.changed();
  }

  /** The connection ended: no listing is started for it any more. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #run(): Promise<void> {
    if (this.#opts.gone()) return;
    this.#running = true;
    this.#owed = false;
    try {
      await this.#opts.relist();
    } finally {
      this.#running = false;
      this.#lastAt = this.#opts.clock.now();
      if (this.#owed && !this.#opts.gone()) this.changed();
    }
  }
}
