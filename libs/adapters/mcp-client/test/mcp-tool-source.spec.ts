import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ToolAbortedError,
  ToolError,
  type ToolContext,
  type ToolDefinition,
} from '@toolgate/contracts';
// Stands in for the tier-1/tier-2 runners: the command unchanged with a minimal environment.
import { PassThroughRunner, testToolContext } from '@toolgate/testing';
import { McpToolSource, parseMcpServersFile, type McpServerConfig } from '../src/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function ctx(workspaceRoot: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return testToolContext({ signal, principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot });
}

function find(source: McpToolSource, name: string): ToolDefinition {
  const def = source.tools().find((d) => d.manifest.name === name);
  if (!def) throw new Error(`${name} is not registered; have ${source.tools().map((d) => d.manifest.name).join(', ')}`);
  return def;
}

async function rejection(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected the call to fail');
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function whoami(source: McpToolSource, root: string): Promise<{ pid: number; cwd: string; greeting: string | null; envNames: string[] }> {
  const out = (await find(source, 'files__whoami').handler.invoke({}, ctx(root))) as { content: { text: string }[] };
  return JSON.parse(out.content[0]?.text ?? '{}');
}

async function childOf(source: McpToolSource): Promise<number> {
  const out = (await find(source, 'files__spawn_child').handler.invoke({}, ctx(root))) as { content: { text: string }[] };
  return Number(out.content[0]?.text);
}

const echoServer = (overrides: Partial<McpServerConfig> = {}): McpServerConfig => ({
  name: 'files',
  command: process.execPath,
  args: [fixture('echo-server.mjs')],
  env: { FIXTURE_GREETING: 'hello from config' },
  tier: 'unisolated',
  ...overrides,
});

// Servers that ignore a closed stdin are killed after this; keeps the suite short.
const stopGraceMs = 200;
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-mcp-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('McpToolSource with a well-behaved server', () => {
  const runner = new PassThroughRunner();
  const logs: string[] = [];
  let source: McpToolSource;
  const parentSecret = 'TOOLGATE_TEST_PARENT_SECRET';

  beforeAll(async () => {
    process.env[parentSecret] = 'must-not-leak';
    source = await McpToolSource.start(echoServer(), runner, { workspaceRoot: root, stopGraceMs, log: (m) => logs.push(m) });
  });
  afterAll(async () => {
    delete process.env[parentSecret];
    await source.close();
  });

  it('starts the server through the runner, with the configured command, args, env and workspace', () => {
    expect(runner.prepared).toHaveLength(1);
    expect(runner.prepared[0]).toEqual({
      spec: { command: process.execPath, args: [fixture('echo-server.mjs')], env: { FIXTURE_GREETING: 'hello from config' } },
      workspaceRoot: root,
    });
  });

  it('registers every tool as <server>__<tool> with unverified defaults', () => {
    expect(source.name).toBe('files');
    expect(source.tools().map((d) => d.manifest.name).sort()).toEqual(
      ['files__crash', 'files__echo', 'files__fail', 'files__picture', 'files__slow', 'files__spawn_child', 'files__whoami'],
    );
    const echo = find(source, 'files__echo').manifest;
    expect(echo).toMatchObject({
      version: '1.2.3',
      description: 'Echoes its text back.',
      provenance: 'mcp:files',
      risk: 'high',
      permissions: [{ type: 'exec', scope: 'mcp:files' }],
      tier: 'unisolated',
      timeoutMs: 30_000,
    });
    expect(source.status()).toMatchObject({ state: 'up', transport: 'stdio', attempt: 0, accepted: 7, rejected: 0 });
  });

  it('closes the input schema and drops $schema, so a strict ajv compiles it and refuses unknown args', () => {
    const input = find(source, 'files__echo').manifest.input;
    expect(input).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    });
    const validate = new Ajv().compile(input);
    expect(validate({ text: 'hi' })).toBe(true);
    expect(validate({ text: 'hi', extra: 1 })).toBe(false);
    for (const def of source.tools()) expect(() => new Ajv().compile(def.manifest.input)).not.toThrow();
  });

  it('passes exactly the prepared environment, nothing of the gateway, and runs in the workspace', async () => {
    const who = await whoami(source, root);
    expect(who.greeting).toBe('hello from config');
    expect(who.cwd).toBe(root);
    expect(who.envNames).toEqual(['FIXTURE_GREETING', 'HOME', 'LANG', 'PATH']);
    expect(who.envNames).not.toContain(parentSecret);
  });

  it('round-trips a call and the output satisfies the manifest output schema', async () => {
    const echo = find(source, 'files__echo');
    const out = await echo.handler.invoke({ text: 'héllo' }, ctx(root));
    expect(out).toEqual({ content: [{ type: 'text', text: 'héllo' }] });
    expect(new Ajv().compile(echo.manifest.output)(out)).toBe(true);
  });

  it('summarises non-text content instead of passing binary payloads on', async () => {
    const picture = find(source, 'files__picture');
    const out = await picture.handler.invoke({}, ctx(root));
    expect(out).toEqual({
      content: [
        { type: 'text', text: 'a picture follows' },
        { type: 'image', summary: 'image (image/png, 16 bytes) not passed on' },
        { type: 'resource_link', summary: 'link to resource pic.png at file:///srv/pic.png' },
      ],
    });
    expect(new Ajv().compile(picture.manifest.output)(out)).toBe(true);
  });

  it('turns an isError result into a ToolError carrying the text', async () => {
    const error = await rejection(find(source, 'files__fail').handler.invoke({ reason: 'no\u0007way' }, ctx(root)));
    expect(error.reason).toBe('MCP_TOOL_ERROR');
    expect(error.message).toBe("'files__fail' failed: cannot comply: no way");
  });

  it('stops a call promptly when the signal aborts, and the server keeps serving', async () => {
    const abort = new AbortController();
    const started = Date.now();
    setTimeout(() => abort.abort(), 100);
    const error = await rejection(find(source, 'files__slow').handler.invoke({ ms: 10_000 }, ctx(root, abort.signal)));
    expect(error).toBeInstanceOf(ToolAbortedError);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await find(source, 'files__echo').handler.invoke({ text: 'still here' }, ctx(root))).toEqual({
      content: [{ type: 'text', text: 'still here' }],
    });
  });

  it('refuses a call whose signal has already fired without reaching the server', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(find(source, 'files__echo').handler.invoke({ text: 'x' }, ctx(root, abort.signal))).rejects.toBeInstanceOf(
      ToolAbortedError,
    );
  });

  it('logs the server stderr for the operator', () => {
    expect(logs).toContain("MCP server 'files' stderr: echo-server: ready");
  });
});

describe('McpToolSource with operator settings from the config file', () => {
  it('applies risk, permissions, tier and timeout from the config, caps the stderr log and survives stdout noise', async () => {
    const config = parseMcpServersFile(
      JSON.stringify({
        servers: [
          {
            name: 'files',
            command: process.execPath,
            args: [fixture('echo-server.mjs')],
            env: { FIXTURE_NOISY: '1' },
            tier: 'bwrap',
            risk: 'medium',
            timeoutMs: 300,
            permissions: [{ type: 'filesystem', scope: 'workspace' }],
          },
        ],
      }),
    ).servers[0] as McpServerConfig;
    const logs: string[] = [];
    const source = await McpToolSource.start(config, new PassThroughRunner(), {
      workspaceRoot: root,
      stopGraceMs,
      log: (m) => logs.push(m),
      stderrLogBytes: 10,
    });
    try {
      expect(find(source, 'files__slow').manifest).toMatchObject({
        risk: 'medium',
        permissions: [{ type: 'filesystem', scope: 'workspace' }],
        tier: 'bwrap',
        timeoutMs: 300,
      });
      const error = await rejection(find(source, 'files__slow').handler.invoke({ ms: 5000 }, ctx(root)));
      expect(error.reason).toBe('TIMEOUT');
      expect(error.message).toBe("'files__slow' did not answer within 300 ms");
      expect(logs).toContain("MCP server 'files': more than 10 bytes of stderr; the rest is not logged");
      expect(logs.some((l) => l.startsWith("MCP server 'files': Unexpected token"))).toBe(true);
      expect(await find(source, 'files__echo').handler.invoke({ text: 'ok' }, ctx(root))).toEqual({
        content: [{ type: 'text', text: 'ok' }],
      });
    } finally {
      await source.close();
    }
  });
});

describe('McpToolSource with a server whose names and schemas it did not choose', () => {
  const logs: string[] = [];
  let source: McpToolSource;
  beforeAll(async () => {
    source = await McpToolSource.start(
      { name: 'raw-tools', command: process.execPath, args: [fixture('raw-server.mjs')], env: {}, tier: 'unisolated' },
      new PassThroughRunner(),
      { workspaceRoot: root, stopGraceMs, log: (m) => logs.push(m) },
    );
  });
  afterAll(() => source.close());

  it('sanitises names, and registers neither of two tools that collide', () => {
    expect(source.tools().map((d) => d.manifest.name).sort()).toEqual(['raw_tools__open_map', 'raw_tools__read_file']);
    expect(logs).toContain(
      `MCP server 'raw-tools': tools "list-items" and "List_Items" all map to 'raw_tools__list_items'; none of them is registered`,
    );
  });

  it('leaves out a tool whose schema does not compile, saying why', () => {
    expect(logs.some((l) => l.startsWith(`MCP server 'raw-tools': tool "broken" is not registered: the input schema does not compile`))).toBe(
      true,
    );
  });

  it('pins 0.0.0 when the server reports no version, keeps the server name in the provenance and a 5,000-character description whole', () => {
    const manifest = find(source, 'raw_tools__read_file').manifest;
    expect(manifest.version).toBe('0.0.0');
    expect(manifest.provenance).toBe('mcp:raw-tools');
    expect(manifest.permissions).toEqual([{ type: 'exec', scope: 'mcp:raw-tools' }]);
    // Within MCP_TOOL_LIMITS.toolDescriptionChars (10,000) since issue 12 defect 7: kept whole.
    expect(manifest.description).toBe('x'.repeat(5000));
  });

  it('strips $schema and $id everywhere and closes even a declared-open top level', () => {
    expect(find(source, 'raw_tools__read_file').manifest.input).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', $comment: 'kept' },
        options: { type: 'object', properties: { encoding: { type: 'string' } } },
      },
      required: ['path'],
      additionalProperties: false,
    });
    expect(find(source, 'raw_tools__open_map').manifest.input['additionalProperties']).toBe(false);
  });

  it('passes a JSON-RPC error of the server on as a ToolError, on one line', async () => {
    const error = await rejection(find(source, 'raw_tools__read_file').handler.invoke({ path: 'a', reject: 'no' }, ctx(root)));
    expect(error.reason).toBe('MCP_PROTOCOL_ERROR');
    expect(error.message).toBe("MCP server 'raw-tools' refused the call (error -32602): refused: no");
  });

  it('answers a generic error for a malformed result and logs the detail for the operator only', async () => {
    const error = await rejection(find(source, 'raw_tools__read_file').handler.invoke({ path: 'a', malformed: true }, ctx(root)));
    expect(error.reason).toBe('MCP_BAD_RESPONSE');
    expect(error.message).toBe("MCP server 'raw-tools' sent an answer that could not be read");
    expect(error.message).not.toContain('/srv/secret');
    expect(logs.some((l) => l.startsWith("MCP server 'raw-tools': call of 'raw_tools__read_file' failed:"))).toBe(true);
  });

  it('calls the tool by the name the server gave it', async () => {
    const out = await find(source, 'raw_tools__read_file').handler.invoke({ path: 'a.txt' }, ctx(root));
    expect(out).toEqual({ content: [{ type: 'text', text: 'readFile:{"path":"a.txt"}' }] });
  });
});

// Each restart spawns node; on a loaded CI machine that alone can take seconds.
describe('McpToolSource when the server crashes', { timeout: 40_000 }, () => {
  const backoff = { initialMs: 100, maxMs: 400, stableMs: 60_000 };

  it('answers a clear error while down, restarts with backoff, serves again, and kills what the server started', async () => {
    const marker = join(root, 'crash-marker');
    const logs: string[] = [];
    const runner = new PassThroughRunner();
    const source = await McpToolSource.start(echoServer({ env: { FIXTURE_CRASH_MARKER: marker } }), runner, {
      workspaceRoot: root,
      stopGraceMs,
      log: (m) => logs.push(m),
      backoff,
    });
    try {
      const { pid } = await whoami(source, root);
      const orphan = await childOf(source);
      // Keep the server from coming back until the test has seen the restart loop.
      writeFileSync(marker, '');
      const crash = await rejection(find(source, 'files__crash').handler.invoke({}, ctx(root)));
      expect(crash.reason).toBe('MCP_SERVER_RESTARTING');
      expect(crash.message).toBe("MCP server 'files' exited during the call; it is restarting, try again shortly");
      await until('the crashed process is gone', () => !alive(pid));
      await until('the child of the crashed server is gone', () => !alive(orphan));
      expect(logs.some((l) => /^MCP server 'files' \(pid \d+\) stopped unexpectedly \(exit code 1\)$/.test(l))).toBe(true);

      await until('two failed restart attempts', () => source.status().attempt >= 3);
      const down = await rejection(find(source, 'files__echo').handler.invoke({ text: 'x' }, ctx(root)));
      expect(down.reason).toBe('MCP_SERVER_RESTARTING');
      expect(down.message).toMatch(/^MCP server 'files' is restarting \(attempt \d+\); try again shortly$/);
      expect(source.status().state).toBe('restarting');
      // The tools stay registered so the registry keeps answering with the clear error.
      expect(source.tools().map((d) => d.manifest.name)).toContain('files__echo');
      expect(logs).toContain("MCP server 'files': restart attempt 1 in 100 ms");
      expect(logs).toContain("MCP server 'files': restart attempt 2 in 200 ms");
      expect(logs).toContain("MCP server 'files' stderr: echo-server: refusing to start while the crash marker exists");
      expect(logs.some((l) => l.startsWith("MCP server 'files': restart attempt 1 failed:"))).toBe(true);

      rmSync(marker);
      const restartedWithin = Date.now();
      await until('the server serves again', () => source.status().state === 'up');
      expect(Date.now() - restartedWithin).toBeLessThan(10_000);
      expect(await find(source, 'files__echo').handler.invoke({ text: 'back' }, ctx(root))).toEqual({
        content: [{ type: 'text', text: 'back' }],
      });
      const restarted = (await whoami(source, root)).pid;
      expect(restarted).not.toBe(pid);
      expect(runner.prepared.length).toBeGreaterThanOrEqual(4);

      // close() ends the restarted server and the children it started.
      const child = await childOf(source);
      expect(alive(child)).toBe(true);
      await source.close();
      await until('the restarted server is gone', () => !alive(restarted), 5000);
      await until('its child is gone', () => !alive(child), 5000);
    } finally {
      rmSync(marker, { force: true });
      await source.close();
    }
  });

  it('close() stops the server and every restart for good', async () => {
    const runner = new PassThroughRunner();
    const logs: string[] = [];
    const source = await McpToolSource.start(echoServer(), runner, { workspaceRoot: root, stopGraceMs, log: (m) => logs.push(m), backoff });
    const echo = find(source, 'files__echo');
    await rejection(find(source, 'files__crash').handler.invoke({}, ctx(root)));
    await source.close();
    const spawned = runner.prepared.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(runner.prepared.length).toBe(spawned);
    expect(source.status().state).toBe('stopped');
    expect(source.tools()).toEqual([]);
    const error = await rejection(echo.handler.invoke({ text: 'x' }, ctx(root)));
    expect(error.reason).toBe('MCP_SERVER_STOPPED');
    expect(error.message).toBe("MCP server 'files' has been stopped");
    await source.close();
  });
});

describe('McpToolSource.start failures', () => {
  it('rejects, naming the server, when the server exits before the handshake', async () => {
    const marker = join(root, 'start-marker');
    writeFileSync(marker, '');
    const logs: string[] = [];
    try {
      await expect(
        McpToolSource.start(echoServer({ env: { FIXTURE_CRASH_MARKER: marker } }), new PassThroughRunner(), {
          workspaceRoot: root,
          stopGraceMs,
          log: (m) => logs.push(m),
        }),
      ).rejects.toThrow("MCP server 'files' failed to start: the process exited before it answered");
      await until('stderr logged', () => logs.some((l) => l.includes('refusing to start')), 2000);
    } finally {
      rmSync(marker, { force: true });
    }
  });

  it('rejects when the command does not exist', async () => {
    await expect(
      McpToolSource.start(echoServer({ command: 'toolgate-no-such-command' }), new PassThroughRunner(), {
        workspaceRoot: root,
        stopGraceMs,
        log: () => undefined,
      }),
    ).rejects.toThrow(/^MCP server 'files' failed to start: .*ENOENT/);
  });

  it('rejects a server that never completes the handshake within the start timeout', async () => {
    const started = Date.now();
    await expect(
      McpToolSource.start(
        echoServer({ args: ['-e', 'setInterval(() => {}, 1000)'] }),
        new PassThroughRunner(),
        { workspaceRoot: root, stopGraceMs, log: () => undefined, startTimeoutMs: 300 },
      ),
    ).rejects.toThrow("MCP server 'files' failed to start: it did not answer in time");
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
