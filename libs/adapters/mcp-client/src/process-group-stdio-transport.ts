import { spawn, type ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { PreparedCommand } from '@toolgate/contracts';

export interface ProcessGroupStdioOptions {
  /** Receives the server's stderr as it arrives. */
  readonly onStderr?: (chunk: Buffer) => void;
  /** Between closing stdin, SIGTERM and SIGKILL when the transport is closed. Default 1000 ms. */
  readonly killGraceMs?: number;
  /** Largest single JSON-RPC message read from the server. Default 4 MiB. */
  readonly maxMessageBytes?: number;
  /** Sees every message sent to the server, as it is sent. */
  readonly onSent?: (message: JSONRPCMessage) => void;
  /** Sees every message read from the server, before the client handles it. */
  readonly onReceived?: (message: JSONRPCMessage) => void;
}

/** Time one turn of the event loop spends delivering a server's messages; a longer backlog waits for the next turn. */
const DELIVERY_SLICE_MS = 8;

/**
 * MCP over stdio to a process started exactly as a tier's `prepare` describes it: its own
 * process group (`detached`), exactly the prepared environment (nothing of the gateway's is
 * merged in) and the prepared working directory. The SDK's `StdioClientTransport` does neither:
 * it adds six variables of the gateway's environment and signals only the direct child, which
 * leaves a server's own children running at the unisolated tier. Here, when the server exits or
 * the transport is closed, the whole group is killed. At the bwrap tier the group's leader is
 * bwrap itself: killing it ends the sandbox's pid namespace, so every process the server started
 * dies too, also one that left the group; and bwrap dies with the gateway (`--die-with-parent`).
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  private readonly readBuffer: ReadBuffer;
  private readonly killGraceMs: number;
  private exited: Promise<void> | undefined;
  private closedOnce = false;
  /** Set once the group has been killed after its leader exited; its id may be reused after that. */
  private swept = false;
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Largest message accepted now, if lower than the read buffer's own cap (see `limitMessages`). */
  private messageLimit: number | undefined;
  /** Bytes received since the last line end: the start of the message being read. */
  private unterminated = 0;
  /** Why the transport ended the server itself, for the caller's error. */
  private refusalText: string | undefined;
  /** Set while delivery of a backlog is spread over several turns (stdout is paused meanwhile). */
  private draining = false;

  constructor(
    private readonly command: PreparedCommand,
    private readonly options: ProcessGroupStdioOptions = {},
  ) {
    this.readBuffer = new ReadBuffer({ maxBufferSize: options.maxMessageBytes ?? 4 * 1024 * 1024 });
    this.killGraceMs = options.killGraceMs ?? 1000;
  }

  /** The server's pid once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Holds every message from now on to `bytes` (undefined: only the read buffer's cap). Reading
   * a message costs the event loop time in proportion to its size, all in one turn (the SDK
   * parses and checks it whole), so a phase that needs less can ask for less.
   */
  limitMessages(bytes: number | undefined): void {
    this.messageLimit = bytes;
  }

  /** Why the transport ended the server (a message over the limit), if it did. */
  get refusal(): string | undefined {
    return this.refusalText;
  }

  /** How the server ended, once it has: exit code or signal. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitStatus;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('the transport is already started'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.command.command, [...this.command.args], {
        cwd: this.command.cwd,
        env: { ...this.command.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('spawn', () => resolve());
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
        // A process that never spawned emits no 'exit'; the connection is over all the same.
        if (child.pid === undefined) this.finish();
      });
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        // Whatever the server started in its group goes with it.
        this.killGroup('SIGKILL');
        this.swept = true;
        // Only a descendant that left the group can still hold stdout open; do not wait for it.
        setTimeout(() => this.finish(), 500).unref();
      });
      // 'close' comes after stdout is drained, so every message the server sent is delivered first.
      child.once('close', () => this.finish());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        if (!this.withinLimit(chunk)) {
          this.refusalText = `the server sent a message larger than ${this.messageLimit} bytes`;
          this.onerror?.(new Error(this.refusalText));
          void this.close();
          return;
        }
        try {
          this.readBuffer.append(chunk);
        } catch (error) {
          // A message larger than the cap: the stream cannot be resynchronised, so end the server.
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        if (!this.draining) this.drain();
      });
      child.stderr?.on('data', (chunk: Buffer) => this.options.onStderr?.(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exitStatus || stdin.destroyed) return Promise.reject(new Error('the MCP server is not running'));
    this.options.onSent?.(message);
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends the server: stdin closed (a polite server exits), then SIGTERM, then SIGKILL, to the group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) {
      this.finish();
      return;
    }
    if (!this.exitStatus) {
      child.stdin?.end();
      if (!(await this.waitForExit(this.killGraceMs))) {
        this.killGroup('SIGTERM');
        if (!(await this.waitForExit(this.killGraceMs))) {
          this.killGroup('SIGKILL');
          await this.waitForExit(this.killGraceMs);
        }
      }
    }
    this.finish();
  }

  /** Whether every message this chunk ends or continues stays within `messageLimit`. */
  private withinLimit(chunk: Buffer): boolean {
    let from = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, from);
      if (end === -1) {
        this.unterminated += chunk.length - from;
        return this.messageLimit === undefined || this.unterminated <= this.messageLimit;
      }
      const size = this.unterminated + end - from;
      this.unterminated = 0;
      if (this.messageLimit !== undefined && size > this.messageLimit) return false;
      from = end + 1;
    }
  }

  private drain(): void {
    const started = performance.now();
    for (;;) {
      if (this.closedOnce) return;
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // One unreadable line (not JSON-RPC) is reported and skipped; the next may be fine.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) {
        if (this.draining) {
          this.draining = false;
          this.child?.stdout?.resume();
        }
        return;
      }
      this.options.onReceived?.(message);
      this.onmessage?.(message);
      if (performance.now() - started >= DELIVERY_SLICE_MS) {
        // A server flooding messages (progress, say) would hold the event loop for as long as its
        // backlog lasts: the rest waits for the next turn, and the server's output with it.
        this.draining = true;
        this.child?.stdout?.pause();
        setImmediate(() => this.drain());
        return;
      }
    }
  }

  private waitForExit(ms: number): Promise<boolean> {
    if (this.exitStatus) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited?.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.swept) return;
    try {
      // The negative pid addresses the group the detached child leads.
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  private finish(): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.readBuffer.clear();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.stdin?.destroy();
    this.onclose?.();
  }
}
