import { ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import type { ShellToolLimits } from './shell-limits.js';
import { processTimeout, runInWorkspace, shellManifestBounds, timeoutArgSchema } from './shell-run.js';
import type { WorkspaceLocks } from './workspace-lock.js';

/** Longest command accepted, in bytes of UTF-8. */
export const MAX_BASH_COMMAND_BYTES = 16 * 1024;

/**
 * `bash -c <command>` in the workspace, at the configured tier. bash starts without profile or
 * rc files; the environment is the tier's scrubbed one.
 */
export function bashTool(limits: ShellToolLimits, locks: WorkspaceLocks): ToolDefinition {
  return {
    manifest: {
      name: 'bash',
      version: '1.0.0',
      description: `Runs a bash command line in the workspace (working directory = workspace root) and returns its exit code, stdout and stderr (each cut at ${limits.maxOutputBytes} bytes). ${limits.tierNote} The process and everything it started are killed at the deadline (timeout_ms, at most ${limits.maxProcessTimeoutMs} ms).`,
      provenance: 'first-party',
      risk: 'high',
      permissions: [{ type: 'exec', scope: '*' }],
      input: {
        type: 'object',
        properties: {
          command: { type: 'string', minLength: 1, maxLength: MAX_BASH_COMMAND_BYTES, description: "A bash command line, e.g. 'ls -la && wc -l *.ts'." },
          timeout_ms: timeoutArgSchema(limits, 'the command'),
        },
        required: ['command'],
        additionalProperties: false,
      },
      ...shellManifestBounds(limits),
    },
    handler: {
      async invoke(args: JsonObject, ctx: ToolContext) {
        const command = args['command'];
        if (typeof command !== 'string' || command.length === 0) throw new ToolError("'command' must be a non-empty string", 'INVALID_ARGUMENT');
        if (Buffer.byteLength(command) > MAX_BASH_COMMAND_BYTES) {
          throw new ToolError(`the command is longer than ${MAX_BASH_COMMAND_BYTES} bytes`, 'INVALID_ARGUMENT');
        }
        const timeoutMs = processTimeout(args, limits.maxProcessTimeoutMs);
        const started = Date.now();
        let waited = false;
        // Shared: bash calls run side by side, but never while a git call of the workspace runs.
        const release = await locks.acquire(ctx.workspaceRoot, 'shared', ctx.signal, () => (waited = true));
        try {
          const remainingMs = waited ? Math.max(1, timeoutMs - (Date.now() - started)) : timeoutMs;
          return await runInWorkspace(ctx, { command: 'bash', args: ['--noprofile', '--norc', '-c', command] }, remainingMs, limits.maxOutputBytes);
        } finally {
          release();
        }
      },
    },
  };
}
