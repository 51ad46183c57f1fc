import { Worker } from 'node:worker_threads';
import { ToolAbortedError, ToolError } from '@toolgate/contracts';

/** One matching line. */
export interface LineMatch {
  readonly line: number;
  readonly text: string;
}

// Plain JS evaluated in the worker: it receives a text and returns its matching lines.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', ({ id, text, limit, width }) => {
  const matches = [];
  let line = 0;
  let start = 0;
  while (start < text.length && matches.length < limit) {
    let end = text.indexOf('\\n', start);
    if (end === -1) end = text.length;
    line++;
    const content = text.slice(start, end);
    if (regex.test(content)) matches.push({ line, text: content.length > width ? content.slice(0, width) : content });
    if (end === text.length) break;
    start = end + 1;
  }
  parentPort.postMessage({ id, matches });
});
`;

/**
 * Matches a regular expression in a worker thread. JavaScript regexes backtrack, and an agent's
 * pattern can take exponential time; on the gateway's event loop that would stall every other
 * call. In a worker, a pattern that runs past its budget is stopped by terminating the worker.
 */
export class RegexWorker {
  private readonly worker: Worker;
  private nextId = 0;
  private failure: Error | undefined;

  constructor(source: string, flags: string) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source, flags }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    this.worker.unref();
    this.worker.on('error', (error) => {
      this.failure = error;
    });
  }

  /** Matching lines of `text`, at most `limit`, each cut to `width` characters. */
  match(text: string, limit: number, width: number, budgetMs: number, signal?: AbortSignal): Promise<LineMatch[]> {
    if (this.failure) return Promise.reject(new ToolError('the pattern could not be evaluated', 'INVALID_PATTERN'));
    if (signal?.aborted) return Promise.reject(new ToolAbortedError('the call was aborted'));
    const id = this.nextId++;
    return new Promise<LineMatch[]>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        this.worker.off('message', onMessage);
        this.worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const onMessage = (message: { id: number; matches: LineMatch[] }): void => {
        if (message.id !== id) return;
        cleanup();
        resolve(message.matches);
      };
      const onExit = (): void => {
        cleanup();
        reject(this.failure ? new ToolError('the pattern could not be evaluated', 'INVALID_PATTERN') : new ToolError('the search stopped', 'SEARCH_FAILED'));
      };
      const onAbort = (): void => {
        cleanup();
        void this.worker.terminate();
        reject(new ToolAbortedError('the call was aborted'));
      };
      const timer = setTimeout(() => {
        cleanup();
        void this.worker.terminate();
        reject(
          new ToolError(
            `the pattern took longer than ${budgetMs} ms on one file (catastrophic backtracking?); simplify it or use fixed_string`,
            'PATTERN_TOO_SLOW',
          ),
        );
      }, budgetMs);
      this.worker.on('message', onMessage);
      this.worker.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.postMessage({ id, text, limit, width });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
