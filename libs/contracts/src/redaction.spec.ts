import { describe, expect, it } from 'vitest';
import { redactSecrets } from './index.js';

describe('redactSecrets', () => {
  it.each([
    ['Bearer abc.def', 'Bearer [REDACTED]'],
    ['Authorization: Bearer abc.def', 'Authorization: Bearer [REDACTED]'],
    ['Authorization: Basic dXNlcjpwYXNz', 'Authorization: [REDACTED]'],
    ['authorization=Token abc', 'authorization=[REDACTED]'],
    ['key sk-ant-api03-abcdefghijklmnop', 'key [REDACTED]'],
    ['sk-abcdefghijkl', '[REDACTED]'],
    ['sk_live_abcdefgh12345678', '[REDACTED]'],
    ['password=hunter2', 'password=[REDACTED]'],
    ['api_key: XYZ123', 'api_key: [REDACTED]'],
    ['x-api-key: abc', 'x-api-key: [REDACTED]'],
    ['client_secret=foo&x=1', 'client_secret=[REDACTED]&x=1'],
    ['{"password":"hunter 2","user":"bob"}', '{"password":"[REDACTED]","user":"bob"}'],
    ["token='abc'", "token='[REDACTED]'"],
    ['PASSWORD = "x y"', 'PASSWORD = "[REDACTED]"'],
    ['cookie: a=b; c=d', 'cookie: [REDACTED]; c=d'],
    ['https://user:s3cret@example.com/x', 'https://user:[REDACTED]@example.com/x'],
    ['AKIAIOSFODNN7EXAMPLE', '[REDACTED]'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', '[REDACTED]'],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', '[REDACTED]'],
    ['xoxb-1234567890-abcdef', '[REDACTED]'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----', '[REDACTED]'],
    ['-----BEGIN PRIVATE KEY-----\nMIIE cut off', '[REDACTED]'],
  ])('redacts %j', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it.each([
    'max_tokens: 100',
    'token budget exhausted',
    'Basic arithmetic',
    'web_search',
    `sha256:${'a'.repeat(64)}`,
    'secret: ',
    'approval:apr-123',
    '2025-03-01T12:00:00.000Z',
    'renamed /q to /query',
  ])('leaves %j alone', (input) => {
    expect(redactSecrets(input)).toBe(input);
  });

  it('is idempotent', () => {
    const once = redactSecrets('Authorization: Bearer abc.def password=x sk-abcdefghijkl');
    expect(redactSecrets(once)).toBe(once);
  });
});
