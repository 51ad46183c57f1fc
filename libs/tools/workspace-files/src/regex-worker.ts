import { Worker } from 'node:worker_threads';
import { ToolAbortedError, ToolError } from '@toolgate/contracts';

/** One matching line. */
export interface LineMatch {
  readonly line: number;
  readonly text: string;
}

// Plain JS evaluated in the worker: it receives a file's bytes and returns its matching lines.
// Decoding and splitting happen here too, so the gateway's thread does no per-byte work.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { source, flags, fixed } = workerData;
const ignoreCase = flags.includes('i');
const wanted = ignoreCase ? source.toLowerCase() : source;
const regex = fixed ? undefined : new RegExp(source, flags);
const decoder = new TextDecoder('utf-8');
const matches_ = (line) => (fixed ? (ignoreCase ? line.toLowerCase() : line).includes(wanted) : regex.test(line));
parentPort.on('message', ({ id, bytes, limit, width }) => {
  const text = decoder.decode(bytes);
  const matches = [];
  let line = 0;
  let start = 0;
  while (start < text.length && matches.length < limit) {
    let end = text.indexOf('\\n', start);
    if (end === -1) end = text.length;
    line++;
    const content = text.slice(start, end);
    if (matches_(content)) matches.push({ line, text: content.length > width ? content.slice(0, width) : content });
    if (end === text.length) break;
    start = end + 1;
  }
  parentPort.postMessage({ id, matches });
});
`;

/**
 * Matches a regular expression (or a fixed string) in a worker thread. JavaScript regexes
 * backtrack, and an agent's pattern can take exponential time; on the gateway's event loop that
 * would stall every other call. In a worker, a pattern that runs past its budget is stopped by
 * terminating the worker. Fixed strings are linear, but a 4 MiB file is still too much work for
 * the gateway's thread, so they are matched here as well.
 */
export class RegexWorker {
  private readonly worker: Worker;
  private nextId = 0;
  private failure: Error | undefined;

  constructor(source: string, flags: string, fixed = false) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source, flags, fixed }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    this.worker.unref();
    this.worker.on('error', (error) => {
      this.failure = error;
    });
  }

  /** Matching lines of the UTF-8 `bytes`, at most `limit`, each cut to `width` characters. */
  match(bytes: Uint8Array, limit: number, width: number, budgetMs: number, signal?: AbortSignal): Promise<LineMatch[]> {
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
      // One plain copy (a Buffer may share its memory with others), then moved, not cloned again.
      const own = new Uint8Array(bytes);
      this.worker.postMessage({ id, bytes: own, limit, width }, [own.buffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
