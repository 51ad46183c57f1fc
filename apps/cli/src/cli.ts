import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { Grant, JsonObject } from '@toolgate/contracts';
import { createToolgateClient, describeClientError, EXPORT_FORMATS, type ToolgateClient, type ToolsExport, type ToolsListFormat } from './client.js';
import { BridgeStartError, mcpEndpoint, startMcpBridge } from './mcp-bridge.js';
import {
  formatApproval,
  formatApprovals,
  formatApprovalView,
  formatAuditRecords,
  formatTenantAuditReport,
  formatEgress,
  formatExplain,
  exportNotes,
  formatAccepted,
  formatHealth,
  formatWhoAmI,
  formatHeldTools,
  formatInvoke,
  formatSources,
  formatTools,
} from './format.js';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** The process's own stdio, for `toolgate mcp`, which speaks MCP on it. */
  readonly stdio?: { readonly stdin: Readable; readonly stdout: Writable };
}

/** The CLI's version, which the MCP bridge reports upstream as its client identity. */
const CLI_VERSION = '0.1.0';

/** A usage fault found after commander parsed the line (bad JSON, bad grant). */
class UsageError extends Error {}

function parseArgsJson(text: string | undefined): JsonObject {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('--args must be a JSON object, e.g. \'{"expression":"2+3"}\'');
  return value as JsonObject;
}

function parseGrant(text: string, previous: Grant[] = []): Grant[] {
  const at = text.indexOf(':');
  if (at <= 0 || at === text.length - 1) throw new UsageError(`--grant takes type:scope, e.g. network:* (got '${text}')`);
  return [...previous, { type: text.slice(0, at), scope: text.slice(at + 1) }];
}

/**
 * The `toolgate` command line. Returns the exit code: 0 success, 1 a denial or failed request,
 * 2 a usage error. Output is human-readable unless `--json` is given.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const program = new Command('toolgate')
    .description('Command line of the Toolgate tool gateway')
    .option('--url <url>', 'server URL (env TOOLGATE_URL)', io.env['TOOLGATE_URL'] ?? 'http://127.0.0.1:8765')
    // No default from the environment here: commander would print it in --help.
    .option('--token <token>', 'bearer token (env TOOLGATE_TOKEN)')
    .option('--json', 'print raw JSON results', false)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError();

  const globals = () => program.opts<{ url: string; token?: string; json: boolean }>();
  const client = (): ToolgateClient => {
    const { url } = globals();
    const token = globals().token ?? io.env['TOOLGATE_TOKEN'];
    return createToolgateClient({ url, ...(token ? { token } : {}) });
  };
  const print = (value: unknown, human: (v: never) => string) => {
    io.out(`${globals().json ? JSON.stringify(value, null, 2) : human(value as never)}\n`);
  };
  /** Wraps each action so request failures print one line and set exit code 1. */
  const action =
    <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      try {
        await fn(...args);
      } catch (error) {
        if (error instanceof UsageError) {
          io.err(`toolgate: ${error.message}\n`);
          exitCode = 2;
          return;
        }
        io.err(`toolgate: ${describeClientError(error, globals().url)}\n`);
        exitCode = 1;
      }
    };

  const tools = program.command('tools').description('list, invoke and explain tools');
  tools
    .command('list')
    .description('tools you may call')
    .addOption(new Option('--format <format>', 'print definitions ready to paste into an LLM request').choices(EXPORT_FORMATS))
    .action(
      action(async (o: { format?: ToolsListFormat }) => {
        if (o.format === undefined) return print(await client().tools.list.query(), formatTools);
        const exported = (await client().tools.list.query({ format: o.format })) as ToolsExport;
        if (globals().json) return print(exported, () => '');
        // stdout holds only the array, so it can be piped into a request; what an alias stands for goes to stderr.
        io.out(`${JSON.stringify(exported.tools, null, 2)}\n`);
        for (const note of exportNotes(exported)) io.err(`toolgate: ${note}\n`);
      }),
    );

  tools
    .command('sources')
    .description('where each tool source (MCP server) is: state, attempt, tools accepted, rejected and held')
    .action(action(async () => print(await client().tools.sources.query(), formatSources)));
  tools
    .command('held')
    .description('tools held because their definition changed since it was pinned, and what changed')
    .action(action(async () => print(await client().tools.held.query(), formatHeldTools)));
  tools
    .command('accept')
    .argument('<tool>', 'the held tool, e.g. files__read_file')
    // Required: the operator names the definition they looked at, so one that changed again since is refused.
    .requiredOption('--digest <sha256:…>', 'the new digest `tools held` shows, of the definition you reviewed')
    .description('accept a held tool\'s changed definition, so it is served again (audited)')
    .action(
      action(async (tool: string, o: { digest: string }) => {
        print(await client().tools.accept.mutate({ tool, digest: o.digest }), formatAccepted);
      }),
    );

  const invokeLike = (cmd: Command) =>
    cmd
      .argument('<tool>', 'tool name, e.g. calculator')
      .option('--args <json>', 'arguments as a JSON object', '{}')
      .option('--version <version>', 'pinned tool version')
      .option('--grant <type:scope>', 'narrow this call to a permission within your standing grants (repeatable)', parseGrantOption, [])
      .option('--approval-id <id>', 'use this approval')
      .option('--approve', 'approve your own call (needs the approver role)', false);
  invokeLike(tools.command('invoke').description('call a tool through every gate')).action(
    action(async (tool: string, o: InvokeOptions) => {
      const result = await client().tools.invoke.mutate(invokeInput(tool, o));
      print(result, formatInvoke);
      if (!result.ok) exitCode = 1;
    }),
  );
  invokeLike(tools.command('explain').description('run the gates without executing anything')).action(
    action(async (tool: string, o: InvokeOptions) => print(await client().tools.explain.query(invokeInput(tool, o)), formatExplain)),
  );

  const approvals = program.command('approvals').description('request and decide human approvals');
  approvals
    .command('request')
    .argument('<tool>')
    .option('--args <json>', 'arguments as a JSON object', '{}')
    .option('--version <version>')
    .description('ask for approval of one exact call')
    .action(
      action(async (tool: string, o: { args: string; version?: string }) => {
        const result = await client().approvals.request.mutate({ tool, args: parseArgsJson(o.args), ...(o.version ? { version: o.version } : {}) });
        print(result, (r: typeof result) => (r.ok ? formatApproval(r.approval) : formatInvoke({ ok: false, callId: '', denial: r.denial })));
        if (!result.ok) exitCode = 1;
      }),
    );
  approvals
    .command('list')
    .option('--status <status>', 'pending | approved | denied | consumed')
    .option('--limit <n>', 'how many', '50')
    .action(
      action(async (o: { status?: string; limit: string }) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
        const status = o.status as 'pending' | 'approved' | 'denied' | 'consumed' | undefined;
        print(await client().approvals.list.query({ limit, ...(status ? { status } : {}) }), formatApprovals);
      }),
    );
  approvals
    .command('show')
    .argument('<id>')
    .description('show one approval request, with any hidden characters in its arguments pointed out')
    .action(action(async (id: string) => print(await client().approvals.get.query({ id }), formatApprovalView)));
  for (const [name, approve] of [['approve', true], ['deny', false]] as const) {
    approvals
      .command(name)
      .argument('<id>')
      .option('--reason <text>')
      .description(`${name} a pending request`)
      .action(
        action(async (id: string, o: { reason?: string }) =>
          print(await client().approvals.decide.mutate({ id, approve, ...(o.reason ? { reason: o.reason } : {}) }), formatApproval),
        ),
      );
  }

  const egress = program.command('settings').description("your tenant's settings").command('egress').description('outbound network access');
  egress.command('get').action(action(async () => print(await client().settings.egress.get.query(), formatEgress)));
  egress
    .command('allow')
    .argument('<host>')
    .description('enable egress and allow one host (operator)')
    .action(action(async (host: string) => print(await client().settings.egress.allow.mutate({ host }), formatEgress)));
  egress
    .command('set')
    .option('--enabled', 'enable egress', false)
    .option('--hosts <list>', 'comma-separated host names', '')
    .option('--allow-any', 'allow any public host', false)
    .description('replace the egress settings (operator)')
    .action(
      action(async (o: { enabled: boolean; hosts: string; allowAny: boolean }) => {
        const hosts = o.hosts.split(',').map((h) => h.trim()).filter(Boolean);
        print(await client().settings.egress.set.mutate({ enabled: o.enabled, allowAny: o.allowAny, hosts }), formatEgress);
      }),
    );

  const audit = program.command('audit').description('the tamper-evident audit trail');
  audit
    .command('tail')
    .option('--limit <n>', 'how many records', '50')
    .action(
      action(async (o: { limit: string }) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
        print(await client().audit.tail.query({ limit }), formatAuditRecords);
      }),
    );
  audit
    .command('verify')
    .description('verify an audit directory offline (or the server\'s trail with --remote)')
    .option('--dir <path>', 'audit directory', './.toolgate/audit')
    .option('--hmac-key-file <file>', 'file holding the HMAC key the trail was written with')
    .option('--remote', 'ask the server to verify its trail instead', false)
    .action(
      action(async (o: { dir: string; hmacKeyFile?: string; remote: boolean }) => {
        if (o.remote) {
          const report = await client().audit.verify.query();
          print(report, formatTenantAuditReport);
          if (!report.ok) exitCode = 1;
          return;
        }
        // Loaded on demand: the offline verifier is the only adapter code the CLI runs.
        const { verifyAuditDirectory, formatAuditReport: formatOffline } = await import('@toolgate/adapter-audit-file');
        const hmacKey = o.hmacKeyFile ? (await readFile(o.hmacKeyFile, 'utf8')).trim() : undefined;
        const report = await verifyAuditDirectory({ dir: resolve(o.dir), ...(hmacKey ? { hmacKey } : {}) });
        print(report, formatOffline);
        if (!report.ok) exitCode = 1;
      }),
    );

  program
    .command('mcp')
    .description("serve MCP on stdio for a desktop client, forwarding every request to the server's /mcp")
    .option('--token-file <file>', 'file holding the bearer token (instead of --token or TOOLGATE_TOKEN)')
    .action(async (o: { tokenFile?: string }) => {
      exitCode = await runMcpBridge(globals(), o.tokenFile, io);
    });

  program
    .command('whoami')
    .description('who the server takes you to be: principal, roles, standing grants, tools you may call, and your budget')
    .action(
      action(async () => {
        print(await client().whoami.query(), formatWhoAmI);
      }),
    );

  program
    .command('health')
    .description('server health')
    .action(
      action(async () => {
        const health = await client().health.query();
        print(health, formatHealth);
        if (!health.ok) exitCode = 1;
      }),
    );

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
    if (error instanceof UsageError) {
      io.err(`toolgate: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  return exitCode;
}

/**
 * Runs `toolgate mcp` until the desktop client closes stdin: 0 then, 1 when the server cannot be
 * reached or refuses the token at start, 2 for a usage fault. Everything human goes to stderr;
 * stdout carries MCP only. The token comes from `--token`, `--token-file` or `TOOLGATE_TOKEN`
 * and is never printed.
 */
async function runMcpBridge(globals: { url: string; token?: string }, tokenFile: string | undefined, io: CliIo): Promise<number> {
  const fail = (code: number, message: string) => {
    io.err(`toolgate mcp: ${message}\n`);
    return code;
  };
  if (!io.stdio) return fail(2, 'needs the process stdio to speak MCP on');
  if (globals.token !== undefined && tokenFile !== undefined) return fail(2, 'pass either --token or --token-file, not both');
  let token = globals.token;
  if (tokenFile !== undefined) {
    try {
      token = (await readFile(tokenFile, 'utf8')).trim();
    } catch (error) {
      // The path is the operator's own argument; the file's contents are never echoed.
      return fail(2, `cannot read --token-file ${tokenFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (!token) return fail(2, `--token-file ${tokenFile} is empty`);
  }
  token ??= io.env['TOOLGATE_TOKEN'];
  if (!token) return fail(2, 'no token: pass --token, --token-file or set TOOLGATE_TOKEN');
  try {
    mcpEndpoint(globals.url);
  } catch (error) {
    return fail(2, (error as Error).message);
  }
  try {
    const bridge = await startMcpBridge({ url: globals.url, token, version: CLI_VERSION, ...io.stdio, log: (line) => io.err(`${line}\n`) });
    await bridge.closed;
    return 0;
  } catch (error) {
    if (error instanceof BridgeStartError) return fail(1, error.message);
    throw error;
  }
}

interface InvokeOptions {
  args: string;
  version?: string;
  grant: Grant[];
  approvalId?: string;
  approve: boolean;
}

function parseGrantOption(value: string, previous: Grant[]): Grant[] {
  try {
    return parseGrant(value, previous);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function invokeInput(tool: string, o: InvokeOptions) {
  return {
    tool,
    args: parseArgsJson(o.args),
    ...(o.version ? { version: o.version } : {}),
    ...(o.grant.length ? { grants: o.grant } : {}),
    ...(o.approvalId ? { approvalId: o.approvalId } : {}),
    ...(o.approve ? { approved: true } : {}),
  };
}
