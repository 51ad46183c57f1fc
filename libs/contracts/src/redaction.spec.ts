import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redaction.js';

/**
 * The CPU time synchronous `work` took (user and system, over this test process's threads), which
 * a loaded box does not stretch as it does the wall clock. contracts' tests import only vitest, so
 * this stands in for `timeOnThread` of @toolgate/testing; it counts at least this thread's time.
 */
function cpuMs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

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

  describe('secret key names with a prefix', () => {
    it.each([
      ['AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'AWS_SECRET_ACCESS_KEY=[REDACTED]'],
      ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG', 'aws_secret_access_key = [REDACTED]'],
      ['GITHUB_TOKEN=abc123', 'GITHUB_TOKEN=[REDACTED]'],
      ['my-api-key: abc', 'my-api-key: [REDACTED]'],
      ['{"db_password":"hunter2"}', '{"db_password":"[REDACTED]"}'],
      ['Proxy-Authorization: Basic dXNlcjpwYXNz', 'Proxy-Authorization: [REDACTED]'],
      ['export OPENAI_API_KEY="abc def"', 'export OPENAI_API_KEY="[REDACTED]"'],
    ])('redacts %j', (input, expected) => {
      expect(redactSecrets(input)).toBe(expected);
    });
  });

  describe('key names glued to a prefix, short names and encoded separators', () => {
    it.each([
      ['PGPASSWORD=hunter2', 'PGPASSWORD=[REDACTED]'],
      ['export PGPASSWORD="hunter 2"', 'export PGPASSWORD="[REDACTED]"'],
      ['dbpasswd: s3cr3t', 'dbpasswd: [REDACTED]'],
      ['csrftoken=abc123', 'csrftoken=[REDACTED]'],
      ['MYAPIKEY=abc123', 'MYAPIKEY=[REDACTED]'],
      ['appsecret: abc', 'appsecret: [REDACTED]'],
      ['DB_PASS=s3cr3t', 'DB_PASS=[REDACTED]'],
      ['smtp-pass: s3cr3t', 'smtp-pass: [REDACTED]'],
      ['MYSQL_PWD=pw1', 'MYSQL_PWD=[REDACTED]'],
      ['?user=bob&pwd=pw1&x=1', '?user=bob&pwd=[REDACTED]&x=1'],
      ['pass=pw1', 'pass=[REDACTED]'],
      ['password%3Dp2', 'password%3D[REDACTED]'],
      ['?q=1&password%3dp2&x=1', '?q=1&password%3d[REDACTED]&x=1'],
      ['token%3Aabc', 'token%3A[REDACTED]'],
      ['%22password%22%3A%22p2%22', '%22password%22%3A[REDACTED]'],
      ['PGPASSWORD%3Dp2', 'PGPASSWORD%3D[REDACTED]'],
    ])('redacts %j', (input, expected) => {
      expect(redactSecrets(input)).toBe(expected);
    });
  });

  describe('bare credentials without a key', () => {
    it.each([
      ['Basic dXNlcjpwYXNz', 'Basic [REDACTED]'],
      ['curl -H "X: Basic dXNlcjpodW50ZXIy" failed', 'curl -H "X: Basic [REDACTED]" failed'],
      ['basic YWRtaW46c2VjcmV0MTIz', 'basic [REDACTED]'],
      ['Basic\tdXNlcjpwYXNz', 'Basic\t[REDACTED]'],
      ['aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key [REDACTED]'],
      ['AWS_SECRET_ACCESS_KEY  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', 'AWS_SECRET_ACCESS_KEY  "[REDACTED]"'],
      ['secret_access_key\nwJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'secret_access_key\n[REDACTED]'],
    ])('redacts %j', (input, expected) => {
      expect(redactSecrets(input)).toBe(expected);
    });
  });

  describe('over-redaction of ordinary words', () => {
    it.each([
      'password reset page',
      'the password was wrong',
      'passport number required',
      'bypass the cache',
      'compass: north',
      'bypass=true',
      'Basic usage',
      'Basic Instructions',
      'Basic authentication failed',
      'Basic dXNlcnBhc3M=',
      'aws_secret_access_key is missing',
      'pwdx',
      'max_tokens=100',
      'tokens: 3',
      'secret_access_key sha1 0123456789abcdef0123456789abcdef01234567890',
    ])('leaves %j alone', (input) => {
      expect(redactSecrets(input)).toBe(input);
    });
  });

  describe('JSON strings with escaped quotes', () => {
    it('hides the whole value, not only the part before an escaped quote', () => {
      expect(redactSecrets('{"password":"a\\"b c","user":"bob"}')).toBe('{"password":"[REDACTED]","user":"bob"}');
    });
  });

  describe('URL userinfo', () => {
    it.each([
      ['https://ghp_secret@github.com/o/r.git', 'https://[REDACTED]@github.com/o/r.git'],
      ['http://:tok@host/', 'http://:[REDACTED]@host/'],
      ['git clone https://x-access-token:abc@github.com/o/r', 'git clone https://x-access-token:[REDACTED]@github.com/o/r'],
      ['https://host/path?email=a@b.example', 'https://host/path?email=a@b.example'],
    ])('redacts %j', (input, expected) => {
      expect(redactSecrets(input)).toBe(expected);
    });
  });

  describe('catastrophic backtracking', () => {
    it.each([
      ['long prefixed names', `${'a_'.repeat(50_000)}x`],
      ['many candidate keys', ' token'.repeat(20_000)],
      ['long userinfo', `https://${'a'.repeat(100_000)}`],
      ['a long glued prefix', `${'a'.repeat(100_000)}password`],
      ['glued prefixes that never meet a separator', 'PGPASSWORD'.repeat(10_000)],
      ['prefix words joined by dashes', `${'-a'.repeat(50_000)}`],
      ['prefix words before a near-miss key', `${'a_'.repeat(50_000)}secret_access_ke`],
      ['many Basic schemes', 'Basic '.repeat(20_000)],
      ['a long Basic value', `Basic ${'A'.repeat(100_000)}=`],
      ['many encoded near-separators', '%22password%22%3'.repeat(10_000)],
      ['many access-key names before short values', ' aws_secret_access_key abc'.repeat(5_000)],
    ])('stays linear on %s', (_name, input) => {
      expect(cpuMs(() => redactSecrets(input))).toBeLessThan(500);
    });
  });

  it('is idempotent', () => {
    const once = redactSecrets('Authorization: Bearer abc.def password=x sk-abcdefghijkl');
    expect(redactSecrets(once)).toBe(once);
  });
});
