import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { TenantWorkspaces } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * Opens the adapter under test with `root` as the host directory its workspaces live under. The
 * suite owns `root`: it may be missing (the adapter makes it) or be a file (a fault it plants).
 */
export type WorkspacesFactory = (root: string) => TenantWorkspaces;

/** Hostile tenant names by class; every one must be refused and create nothing anywhere. */
export const HOSTILE_TENANT_NAMES: Readonly<Record<string, readonly string[]>> = {
  'path traversal': ['..', '../escape', '..\\escape', 'a/../../escape', '%2e%2e', '%2e%2e%2fescape', '...'],
  'path separators': ['a/b', '/abs', '/', 'a\\b', 'C:\\Windows', 'acme/', '//server/share'],
  'NUL and control characters': ['acme\u0000', '\u0000', 'ac\u0000me', 'acme\n', 'ac\rme', '\tacme', 'acme\u007f', 'acme\u001b[31m'],
  'very long names': ['a'.repeat(129), 'a'.repeat(4096), `acme${'.'.repeat(300)}`],
  'leading dot or dash': ['.', '.hidden', '.ssh', '-rf', '--help', '-', '_leading-underscore'],
  'unicode look-alikes': [
    'аcme', // Cyrillic а
    'acme\u200b', // zero-width space
    'ac\u0301me', // combining accent
    '\uff0e\uff0e', // fullwidth dots
    'a\u2215b', // division slash
    'a\uff0fb', // fullwidth solidus
    'ａｃｍｅ', // fullwidth letters
    '\u202eemca', // right-to-left override
  ],
  'empty and blank': ['', ' ', 'acme ', ' acme'],
};

/** The behaviour every `TenantWorkspaces` adapter that keeps host directories must share. */
export function testTenantWorkspaces(open: WorkspacesFactory): void {
  let parent: string;
  let root: string;
  let workspaces: TenantWorkspaces;

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-workspaces-'));
    root = join(parent, 'root');
    workspaces = open(root);
  });
  afterEach(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  const inside = (path: string): boolean => {
    const rel = relative(root, path);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && !rel.split(sep).includes('..');
  };

  it('makes an absolute directory inside the root on first use, and knows it from then on without waiting', async () => {
    expect(workspaces.created('acme')).toBeUndefined();
    const path = await workspaces.prepare('acme');
    expect(isAbsolute(path)).toBe(true);
    expect(inside(path)).toBe(true);
    expect((await lstat(path)).isDirectory()).toBe(true);
    expect(workspaces.created('acme')).toBe(path);
    expect(await workspaces.prepare('acme')).toBe(path);
  });

  it('gives different tenants different directories, neither inside the other', async () => {
    const names = ['acme', 'globex', 'a', 'A-1', 'acme.prod', 'x_y', 'a..b', '9'.repeat(128)];
    const paths = await Promise.all(names.map((name) => workspaces.prepare(name)));
    expect(new Set(paths).size).toBe(names.length);
    for (const a of paths) for (const b of paths) if (a !== b) expect(relative(a, b).startsWith('..')).toBe(true);
  });

  it('keeps a prepared workspace (and what a tool left in it) when prepared again', async () => {
    const path = await workspaces.prepare('acme');
    await writeFile(join(path, 'notes.txt'), 'kept');
    const again = open(root);
    expect(await again.prepare('acme')).toBe(path);
    expect(await readdir(path)).toEqual(['notes.txt']);
  });

  for (const [kind, names] of Object.entries(HOSTILE_TENANT_NAMES)) {
    describe(kind, () => {
      it('refuses every spelling, creates nothing anywhere and echoes neither the name nor a host path', async () => {
        for (const name of names) {
          const error: unknown = await workspaces.prepare(name).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, JSON.stringify(name)).toBeInstanceOf(Error);
          const message = (error as Error).message;
          expect(message).not.toContain(parent);
          if (name.trim().length > 2) expect(message).not.toContain(name);
          expect(workspaces.created(name)).toBeUndefined();
        }
        // Nothing was made: not beside the root (where `..` leads), and nothing in the root either.
        expect((await readdir(parent)).filter((entry) => entry !== 'root')).toEqual([]);
        expect(await readdir(root).catch(() => [])).toEqual([]);
      });
    });
  }

  describe('stalling input', () => {
    for (const [label, huge] of [
      ['of path segments', `a${'/..'.repeat(3_500_000)}`],
      ['of allowed characters', 'a'.repeat(10_000_000)],
      ['of dots', `a${'.'.repeat(10_000_000)}!`],
    ] as const) {
      it(`refuses a 10 MB tenant name ${label} at once, and a timer set meanwhile still fires within 100 ms`, async () => {
        const timer = new Promise<number>((resolve) => {
          const set = performance.now();
          setTimeout(() => resolve(performance.now() - set), 0);
        });
        const started = performance.now();
        await expect(workspaces.prepare(huge)).rejects.toThrow(Error);
        expect(performance.now() - started).toBeLessThan(100);
        expect(await timer).toBeLessThan(100);
      });
    }
  });

  describe('concurrent prepare of one tenant', () => {
    it('answers every caller with the same directory, made once', async () => {
      const paths = await Promise.all(Array.from({ length: 50 }, () => workspaces.prepare('acme')));
      expect(new Set(paths).size).toBe(1);
      expect(await readdir(root)).toHaveLength(1);
    });

    it('fails every concurrent caller alike when the directory cannot be made, and none is told it exists', async () => {
      await writeFile(root, 'a file where the root should be');
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => workspaces.prepare('acme')));
      expect(results.every((r) => r.status === 'rejected')).toBe(true);
      expect(workspaces.created('acme')).toBeUndefined();
    });
  });

  describe('failure is not remembered', () => {
    it('retries after a failure: once the fault is cleared, the same tenant is prepared', async () => {
      await writeFile(root, 'a file where the root should be');
      const error: unknown = await workspaces.prepare('acme').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toContain(parent);
      expect(workspaces.created('acme')).toBeUndefined();

      await rm(root);
      const path = await workspaces.prepare('acme');
      expect(inside(path)).toBe(true);
      expect((await lstat(path)).isDirectory()).toBe(true);
      expect(workspaces.created('acme')).toBe(path);
    });

    // Assumes the layout every host-directory adapter so far uses: one directory per tenant, side by side.
    it('refuses a tenant whose directory name is taken by a file, then prepares it once the file is gone', async () => {
      const first = await workspaces.prepare('first');
      const blocked = join(dirname(first), 'acme');
      await writeFile(blocked, 'not a directory');
      await expect(workspaces.prepare('acme')).rejects.toThrow(Error);
      expect(workspaces.created('acme')).toBeUndefined();
      await rm(blocked);
      expect((await lstat(await workspaces.prepare('acme'))).isDirectory()).toBe(true);
    });
  });
}
