import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const run = promisify(execFile);
const CLI = resolve(__dirname, '../../cli/bin/toolgate.mjs');

/** Runs the real `toolgate` command as a separate process, as a user would. */
async function toolgate(h: Harness, args: string[], token = 'demo'): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, TOOLGATE_URL: h.server.url, TOOLGATE_TOKEN: token },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('toolgate CLI against a running server', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('lists and invokes tools', async () => {
    const list = await toolgate(h, ['tools', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^calculator@1\.0\.0\s+low/m);

    const invoke = await toolgate(h, ['--json', 'tools', 'invoke', 'calculator', '--args', '{"expression":"2+3*4"}']);
    expect(invoke.code).toBe(0);
    expect(JSON.parse(invoke.stdout)).toMatchObject({ ok: true, output: { result: 14 } });
  });

  it('prints tool definitions ready to paste with --format, and refuses an unknown format (exit 2)', async () => {
    const openai = await toolgate(h, ['tools', 'list', '--format', 'openai']);
    expect(openai.code).toBe(0);
    const tools = JSON.parse(openai.stdout);
    expect(tools).toContainEqual({ type: 'function', function: expect.objectContaining({ name: 'calculator', parameters: expect.objectContaining({ additionalProperties: false }) }) });
    expect(openai.stderr).toBe('');
    const anthropic = JSON.parse((await toolgate(h, ['tools', 'list', '--format', 'anthropic'])).stdout);
    expect(anthropic.map((t: { name: string }) => t.name)).toEqual(tools.map((t: { function: { name: string } }) => t.function.name));
    const bad = await toolgate(h, ['tools', 'list', '--format', 'gemini']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are openai, anthropic, mcp, toolgate/);
  });

  it('exits 1 on a denial and prints the gate and hint', async () => {
    const denied = await toolgate(h, ['tools', 'invoke', 'calculator', '--args', '{"expression":"1"}', '--version', '2.0.0']);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toMatch(/denied at lookup: VERSION_MISMATCH/);
  });

  it('explains without running', async () => {
    const explain = await toolgate(h, ['tools', 'explain', 'calculator', '--args', '{"expression":"1"}']);
    expect(explain.code).toBe(0);
    expect(explain.stdout).toMatch(/would run: yes/);
  });

  it('exits 2 on usage errors with a specific message', async () => {
    const bad = await toolgate(h, ['tools', 'invoke', 'calculator', '--args', '{nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--args is not valid JSON/);
  });

  it('says unauthorized for a wrong token', async () => {
    const res = await toolgate(h, ['tools', 'list'], 'wrong-token');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/unauthorized/);
  });

  it('manages egress settings', async () => {
    const allow = await toolgate(h, ['settings', 'egress', 'allow', 'example.org']);
    expect(allow.code).toBe(0);
    expect(allow.stdout).toMatch(/egress: enabled for example\.org/);
  });
});
