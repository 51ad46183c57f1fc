import type { ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { checkRepositoryConfig } from './git-repository-config.js';

// The allowlist on `git config --list -z` output, spelled as git prints it (the git tool's
// hostile repositories that reach it through a real git call are test/git.hostile.spec.ts).
describe('config allowlist spellings', () => {
  const listing = (...keys: string[]) => keys.map((key) => `${key}\nvalue\0`).join('');
  it('accepts harmless keys however git prints them, subsections with dots included', () => {
    expect(() => checkRepositoryConfig(listing('core.bare', 'Core.FileMode', 'branch.feature.x.remote', 'remote.up.stream.url', 'advice.detachedhead', 'color.diff.meta'))).not.toThrow();
    expect(() => checkRepositoryConfig('core.bare\0user.name\nSomeone\0')).not.toThrow();
    expect(() => checkRepositoryConfig('')).not.toThrow();
  });

  const refusedKeys: [string, RegExp][] = [
    ['filter.x.clean', /runs a program \(a filter driver\)/],
    ['FILTER.X.SMUDGE', /runs a program \(a filter driver\)/],
    ['diff.x.renames', /configures a diff driver/],
    ['diff.a.b.textconv', /runs a program/],
    ['merge.x.name', /configures a merge driver/],
    ['branch.remote', /not on the list/],
    ['remote.origin.uploadpack', /runs a program/],
    ['remote.origin.vcs', /runs a program/],
    ['remote.url.x.evil', /not on the list/],
    ['includeif.onbranch:main.path', /pulls in settings/],
    ['gpg.ssh.program', /runs a program/],
    ['pager.log', /can run a program/],
    ['commit.template', /read a file/],
    ['core.worktree', /another work tree/],
  ];
  it.each(refusedKeys)('refuses %s, saying why', (key, why) => {
    expect(() => checkRepositoryConfig(listing('core.bare', key))).toThrow(why);
  });

  it('shows a hostile key without its control characters and cut to length', () => {
    const error = (() => {
      try {
        checkRepositoryConfig(listing(`x.\u001b[2J${'y'.repeat(500)}.z`));
      } catch (e) {
        return e as ToolError;
      }
      throw new Error('not refused');
    })();
    expect(error.reason).toBe('GIT_REPOSITORY_REFUSED');
    expect(error.message).not.toContain('\u001b');
    expect(error.message.length).toBeLessThan(400);
  });
});
