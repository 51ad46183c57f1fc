import { timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { sanitizeToolMessage } from './error-sanitizer.js';

const ctx = { workspaceRoot: '/srv/toolgate/ws/acme', argsJson: '{"path":"/etc/passwd"}' };

describe('sanitizeToolMessage', () => {
  it.each([
    ["open '/root/secret/path' failed", "open '[path]' failed"],
    ['see /var/lib/x.log and C:\\Users\\me\\key.txt', 'see [path] and [path]'],
    ['loaded file:///opt/app/config.json', 'loaded [path]'],
    ['key:/home/me/.ssh/id_rsa', 'key:[path]'],
    ['/srv/toolgate/ws/acme/notes.md is read-only', '<workspace>/notes.md is read-only'],
    ["'/etc/passwd' is outside the workspace", "'/etc/passwd' is outside the workspace"],
    ['fetch https://example.com/a/b failed', 'fetch https://example.com/a/b failed'],
    ["unexpected '/' at position 3", "unexpected '/' at position 3"],
    ['ratio 1/2 and and/or', 'ratio 1/2 and and/or'],
    ['relative ./a/b and ../c', 'relative ./a/b and ../c'],
    ['boom\n    at fn (/app/dist/x.js:1:2)\n    at next (node:internal/x:3:4)', 'boom'],
    ['', 'the tool failed'],
  ])('%j → %j', (message, expected) => {
    expect(sanitizeToolMessage(message, ctx)).toBe(expected);
  });

  it('cuts long messages', () => {
    expect(sanitizeToolMessage('x'.repeat(5000), ctx)).toHaveLength(1000);
  });

  it('still cuts a stack frame indented with tabs, and keeps words that merely start with "at"', () => {
    expect(sanitizeToolMessage('boom\n\tat fn (x.js:1:2)\natlas is fine', ctx)).toBe('boom\natlas is fine');
  });

  describe('catastrophic backtracking and size blow-up in tool-chosen failure text', () => {
    const bigArgs = JSON.stringify({ paths: Array.from({ length: 2000 }, (_, i) => `/data/file-${i}`) });
    it.each([
      ['a megabyte of blank lines', '\n'.repeat(1024 * 1024) + 'x'],
      ['a megabyte of space-and-newline lines', ' \n'.repeat(512 * 1024) + 'x'],
      ['a megabyte of tab lines before a frame', '\t\n'.repeat(512 * 1024) + 'at x'],
      ['a megabyte of paths', '/a/b '.repeat(200 * 1024)],
      ['a megabyte of slashes', '/'.repeat(1024 * 1024)],
    ])('answers %s in linear time', (_name, message) => {
      const { value: out, ms } = timeOnThread(() => sanitizeToolMessage(message, { workspaceRoot: '/srv/ws', argsJson: bigArgs }));
      expect(ms).toBeLessThan(100);
      expect(out.length).toBeLessThanOrEqual(1000);
    });
  });
});
