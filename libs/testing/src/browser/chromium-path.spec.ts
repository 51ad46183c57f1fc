import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chromiumForSuite, chromiumPath } from './chromium-path.js';

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-chromium-'));
  const browser = join(dir, 'chromium');
  writeFileSync(browser, '#!/bin/sh\n');
  chmodSync(browser, 0o755);
  const plain = join(dir, 'not-executable');
  writeFileSync(plain, '');
  chmodSync(plain, 0o644);
  const folder = join(dir, 'a-directory');
  mkdirSync(folder);
  chmodSync(folder, 0o755);
  return { browser, plain, folder, missing: join(dir, 'missing') };
}

describe('chromiumPath', () => {
  it('takes the first candidate that is an executable file, skipping missing, plain files and directories', () => {
    const f = fixture();
    expect(chromiumPath({}, [f.missing, f.folder, f.browser])).toBe(f.browser);
    expect(chromiumPath({}, [f.missing, f.plain, f.folder])).toBeUndefined();
  });

  it('prefers TOOLGATE_CHROMIUM, and does not fall back when it names no executable', () => {
    const f = fixture();
    expect(chromiumPath({ TOOLGATE_CHROMIUM: f.browser }, [])).toBe(f.browser);
    expect(chromiumPath({ TOOLGATE_CHROMIUM: f.plain }, [f.browser])).toBeUndefined();
  });
});

describe('chromiumForSuite', () => {
  afterEach(() => vi.restoreAllMocks());

  it('outside CI, a missing browser skips with a printed reason', () => {
    const f = fixture();
    const printed: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => printed.push(String(chunk)) > 0);
    expect(chromiumForSuite('page suite', {}, [f.missing])).toBeUndefined();
    expect(printed).toEqual([`page suite: no chromium at ${f.missing}; its browser tests are skipped (install chromium or set TOOLGATE_CHROMIUM)\n`]);
  });

  it('with CI=true, a missing browser fails the suite', () => {
    const f = fixture();
    expect(() => chromiumForSuite('page suite', { CI: 'true' }, [f.missing])).toThrow(/CI=true but page suite has no browser: no chromium at .*\.ci\/run installs/);
    expect(() => chromiumForSuite('page suite', { CI: 'true', TOOLGATE_CHROMIUM: f.plain }, [f.browser])).toThrow(/TOOLGATE_CHROMIUM=.* is not an executable file/);
    expect(chromiumForSuite('page suite', { CI: 'true' }, [f.browser])).toBe(f.browser);
  });
});
