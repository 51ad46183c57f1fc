import { describe, expect, it } from 'vitest';
import { parsePrincipalsFile, StaticPrincipalDirectory } from '@toolgate/adapter-principals-file';
import { PrincipalsReloader } from './principals-reloader.js';

const file = (...ids: string[]) =>
  JSON.stringify({
    principals: ids.map((id) => ({ id, token: `${id}-token-0123456789abcdef`, tenant: 'acme', roles: ['worker'] })),
    roles: { worker: ['calculator'] },
    tenants: { acme: { tools: ['*'] } },
  });
const tokenOf = (id: string) => `${id}-token-0123456789abcdef`;

/** A reloader over a file held in memory, whose reads the test releases one at a time. */
function setup(first: string) {
  const directory = new StaticPrincipalDirectory(parsePrincipalsFile(first).data);
  const logs: string[] = [];
  let text = first;
  let reads = 0;
  let gate: Promise<void> = Promise.resolve();
  const reloader = new PrincipalsReloader({
    read: async () => {
      reads += 1;
      await gate;
      return text;
    },
    directory,
    log: (level, message) => logs.push(`${level} ${message}`),
    path: '/nonexistent/principals.json',
    what: 'TOOLGATE_PRINCIPALS_FILE=principals.json',
  });
  return {
    directory,
    logs,
    reloader,
    reads: () => reads,
    write: (next: string) => void (text = next),
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = Promise.resolve();
        release();
      };
    },
  };
}

describe('PrincipalsReloader', () => {
  it('serves a valid new file from the next call, and refuses an invalid one, keeping the old', async () => {
    const t = setup(file('alice', 'bob'));
    t.write(file('alice', 'carol'));
    expect(await t.reloader.reload('SIGHUP')).toBe(true);
    expect(t.directory.principalOf(tokenOf('bob'))).toBeUndefined();
    expect(t.directory.principalOf(tokenOf('carol'))?.id).toBe('carol');
    t.write('{"principals": [{"id": "mallory"}]}');
    expect(await t.reloader.reload('SIGHUP')).toBe(false);
    expect(t.directory.principalOf(tokenOf('carol'))?.id).toBe('carol');
    expect(t.logs.at(-1)).toMatch(/^warn TOOLGATE_PRINCIPALS_FILE=principals\.json: reload refused \(SIGHUP\): .+; the principals read before keep serving$/);
  });

  it('runs one re-read at a time: requests during one coalesce into a single re-read after it, which sees the newest file', async () => {
    const t = setup(file('alice'));
    const release = t.hold();
    t.write(file('bob'));
    const first = t.reloader.reload('SIGHUP');
    const second = t.reloader.reload('the file changed');
    const third = t.reloader.reload('SIGHUP');
    t.write(file('carol'));
    release();
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(await third).toBe(true);
    // The first read, and one more for both requests made while it ran.
    expect(t.reads()).toBe(2);
    expect(t.directory.principalOf(tokenOf('carol'))?.id).toBe('carol');
  });

  it('after close, a re-read under way changes nothing, and no new one starts', async () => {
    const t = setup(file('alice'));
    const release = t.hold();
    t.write(file('bob'));
    const pending = t.reloader.reload('SIGHUP');
    t.reloader.close();
    release();
    expect(await pending).toBe(false);
    expect(await t.reloader.reload('SIGHUP')).toBe(false);
    expect(t.directory.principalOf(tokenOf('alice'))?.id).toBe('alice');
    expect(t.reads()).toBe(1);
  });

  it('a directory that cannot be watched is logged, and SIGHUP still reloads', async () => {
    const t = setup(file('alice'));
    t.reloader.watch();
    expect(t.logs.some((l) => l.includes('cannot be watched for changes (ENOENT); SIGHUP still reloads it'))).toBe(true);
    t.write(file('bob'));
    expect(await t.reloader.reload('SIGHUP')).toBe(true);
    t.reloader.close();
  });
});
