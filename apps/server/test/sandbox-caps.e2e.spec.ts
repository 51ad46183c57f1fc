import { BwrapRunner } from '@toolgate/adapter-executor-bwrap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, healthTimes, startHarness, type Harness } from './e2e-harness.js';

const unavailable = await bwrapUnavailable('sandbox caps e2e');
const caps = unavailable ? undefined : await new BwrapRunner().resourceCaps();
const cgroupCaps = caps !== undefined && caps.processes !== 'none' && caps.memory !== 'none' && caps.memory !== 'rlimit';
// CI runs as root on a host with the pids and memory controllers: there the caps must be real.
if (caps && !cgroupCaps && process.env['CI'] === 'true') throw new Error(`CI=true but the per-call cgroup caps cannot be applied: ${caps.problems.join('; ')}`);
if (caps && !cgroupCaps) process.stderr.write(`sandbox caps e2e: no per-call cgroup caps here (${caps.problems.join('; ')}); the fork bomb and memory tests are skipped\n`);

const GRANTS = [
  { type: 'exec', scope: '*' },
  { type: 'filesystem', scope: 'workspace' },
];
const HEALTH_BOUND_MS = 100;


describe.skipIf(unavailable !== undefined)('resource exhaustion through the server (TOOLGATE_SANDBOX_MAX_PROCESSES, TOOLGATE_SANDBOX_MEMORY_MB)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ TOOLGATE_SANDBOX_MAX_PROCESSES: '32', TOOLGATE_SANDBOX_MEMORY_MB: '256' });
  });
  afterAll(async () => h?.stop());

  const bash = (command: string, timeoutMs = 20_000) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'bash', args: { command, timeout_ms: timeoutMs }, grants: GRANTS, approved: true } });

  /** Runs a hostile bash call while polling /healthz; returns its result and every /healthz time. */
  async function whileHealthy(command: string, timeoutMs: number) {
    let done = false;
    const call = bash(command, timeoutMs).finally(() => (done = true));
    const health = await healthTimes(h, () => done);
    return { result: await call, health };
  }

  it('warns at start, in one line, exactly when a cap cannot be applied here', () => {
    const warnings = h.logs.filter((l) => l.startsWith('warn ') && l.includes('no per-call'));
    if (cgroupCaps) expect(warnings).toEqual([]);
    else expect(warnings).toHaveLength(1);
  });

  it.skipIf(!cgroupCaps)('stops a fork bomb at the configured cap while /healthz stays prompt and another call runs', async () => {
    // The bomb itself ends after 4 s; the call's deadline leaves room for a loaded CI box.
    const bomb = whileHealthy('sleep 5 & h=$!; timeout 4 bash -c ":(){ :|:& };:" 2>/dev/null; wait $h; echo "over"', 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    const other = await bash('echo other');
    const { result, health } = await bomb;
    expect(other.body).toMatchObject({ ok: true, output: { exit_code: 0, stdout: 'other\n' } });
    // The bomb filled its own cap and nothing else: the holder's wait and echo (builtins) still ran.
    expect(result.body).toMatchObject({ ok: true, output: { exit_code: 0, stdout: 'over\n' } });
    expect(Math.max(...health)).toBeLessThan(HEALTH_BOUND_MS);
  }, 90_000);

  it.skipIf(!cgroupCaps)('kills a 512 MiB allocation at the configured 256 MiB cap, and lets 64 MiB through', async () => {
    const { result, health } = await whileHealthy('python3 -c "b = b\'x\' * (512 * 1024**2); print(\'allocated\')"', 20_000);
    expect(result.body.ok).toBe(true);
    expect(result.body.output.stdout).not.toContain('allocated');
    expect(result.body.output.exit_code).not.toBe(0);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BOUND_MS);
    const small = await bash('python3 -c "b = b\'x\' * (64 * 1024**2); print(\'allocated\')"');
    expect(small.body).toMatchObject({ ok: true, output: { exit_code: 0, stdout: 'allocated\n' } });
  });

  it('refuses 200 MB in /dev/shm and in /dev', async () => {
    const result = await bash('head -c 200M /dev/zero > /dev/shm/big; echo "shm=$?"; head -c 200M /dev/zero > /dev/big; echo "dev=$?"; echo x > /dev/null; echo "null=$?"');
    expect(result.body.ok).toBe(true);
    expect(result.body.output.stdout).toMatch(/^shm=[1-9]/m);
    expect(result.body.output.stdout).toMatch(/^dev=[1-9]/m);
    expect(result.body.output.stdout).toMatch(/^null=0$/m);
  });
});
