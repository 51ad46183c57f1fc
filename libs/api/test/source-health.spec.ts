import { describe, expect, it } from 'vitest';
import { readinessOf, sourceHealthOf, type HealthReport, type SourceHealth } from '../src/index.js';

const source = (name: string, state: SourceHealth['state'], attempt = 0): SourceHealth => ({
  name,
  state,
  transport: 'stdio',
  attempt,
  accepted: 3,
  rejected: 1,
  held: 0,
  since: 1_764_000_000_000,
});

const health = (sources: SourceHealth[], reasons: string[] = []): HealthReport => ({ ok: reasons.length === 0, version: 'test', reasons, sources });

describe('readiness from health', () => {
  it('is ready with no sources, and with every source up', () => {
    expect(readinessOf(health([]))).toEqual({ ready: true, reasons: [], sources: [] });
    const up = [source('files', 'up'), source('docs', 'up')];
    expect(readinessOf(health(up))).toEqual({ ready: true, reasons: [], sources: up });
  });

  it('is not ready while any configured source has not finished its first start, naming each', () => {
    const sources = [source('files', 'up'), source('docs', 'starting'), source('wiki', 'starting')];
    expect(readinessOf(health(sources))).toEqual({
      ready: false,
      reasons: ["source 'docs' has not finished its first start", "source 'wiki' has not finished its first start"],
      sources,
    });
  });

  it.each(['restarting', 'failed', 'stopped'] as const)('stays ready with a source that is %s: it is reported, not fatal', (state) => {
    const sources = [source('files', 'up'), source('flaky', state, 4)];
    expect(readinessOf(health(sources))).toEqual({ ready: true, reasons: [], sources });
  });

  it('is not ready while calls are refused (the audit is down), whatever the sources say', () => {
    const sources = [source('files', 'up')];
    expect(readinessOf(health(sources, ['audit: segment 3 does not verify']))).toEqual({ ready: false, reasons: ['audit: segment 3 does not verify'], sources });
  });
});

describe('information leak to unauthenticated callers: the public view of a source report', () => {
  it('copies the status and counts and nothing else a report carries', () => {
    // A report as a future source might send it: a reason with a path, a command line, an env.
    const report = {
      ...source('files', 'restarting', 2),
      reason: 'stopped unexpectedly (exit code 1): /opt/servers/files/index.js',
      command: '/usr/bin/node /opt/servers/files/index.js --token s3cr3t',
      env: { API_KEY: 's3cr3t' },
      lastError: new Error('/home/op/.config'),
    };
    const shown = sourceHealthOf(report);
    expect(shown).toEqual(source('files', 'restarting', 2));
    expect(JSON.stringify(shown)).not.toMatch(/opt|s3cr3t|home|exit code/);
  });
});
