import { hash } from 'node:crypto';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolPinStoreToken, type ToolPin } from '@toolgate/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config.js';
import { ConfigToken, LogToken, StateStoresToken } from '../tokens.js';
import { Binder } from './binder.js';
import { bindState } from './state.bindings.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** This process's open descriptors on files under `dir`. */
function openUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir));
}

function sqliteState(dataDir: string): Binder {
  const binder = new Binder();
  binder.constant(ConfigToken, { dataDir, store: 'sqlite' } as unknown as ServerConfig);
  binder.constant(LogToken, () => undefined);
  bindState(binder);
  return binder;
}

const definition = JSON.stringify({ description: 'Reads a file.', name: 'read_file' });
const pin: ToolPin = {
  tool: 'files__read_file',
  provenance: 'mcp:files',
  digest: `sha256:${hash('sha256', definition, 'hex')}`,
  definition,
  pinnedAt: Date.UTC(2030, 0, 1),
  pinnedBy: 'first-seen',
};

describe('the tool pin store in the server', () => {
  it('is the state database’s, opened and closed with the other stores, and keeps pins across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-state-'));
    dirs.push(dataDir);
    const first = sqliteState(dataDir);
    const pins = await first.get(ToolPinStoreToken);
    expect(pins).toBe((await first.get(StateStoresToken)).pins);
    expect(await pins.pinFirst(pin)).toEqual(pin);
    expect(openUnder(dataDir).some((target) => target.endsWith('state.db'))).toBe(true);
    await first.close(() => undefined);
    expect(openUnder(dataDir)).toEqual([]);

    const second = sqliteState(dataDir);
    const reopened = await second.get(ToolPinStoreToken);
    expect(await reopened.get(pin.tool)).toEqual(pin);
    expect(await reopened.pinFirst({ ...pin, pinnedBy: 'mallory' })).toEqual(pin);
    await second.close(() => undefined);
  });
});
