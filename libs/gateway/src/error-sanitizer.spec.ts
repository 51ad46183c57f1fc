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
});
