import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has embedded defaults: loopback, port 8765, SQLite state and file audit in ./.toolgate', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8765,
      dataDir: '/srv/app/.toolgate',
      store: 'sqlite',
      audit: 'file',
      shellTier: 'bwrap',
      shellTierExplicit: false,
      bwrapPath: 'bwrap',
      sandboxMaxProcesses: 256,
      sandboxMemoryMb: 1024,
      workspaceRoot: '/srv/app/.toolgate/workspaces',
      webSearch: { provider: 'duckduckgo', maxResults: 5 },
      egress: { enabled: false, allowedHosts: [], allowAny: false, allowedCidrs: [] },
    });
  });

  it.each([
    ['TOOLGATE_PORT', '70000', /TOOLGATE_PORT must be a whole number from 0 to 65535/],
    ['TOOLGATE_PORT', 'http', /TOOLGATE_PORT/],
    ['TOOLGATE_STORE', 'mysql', /TOOLGATE_STORE must be one of sqlite, postgres/],
    ['TOOLGATE_AUDIT', 'syslog', /TOOLGATE_AUDIT must be one of file, postgres/],
    ['TOOLGATE_EGRESS_ENABLED', 'maybe', /TOOLGATE_EGRESS_ENABLED must be true or false/],
    ['TOOLGATE_SHELL_TIER', 'docker', /TOOLGATE_SHELL_TIER must be one of bwrap, container, unisolated/],
    ['TOOLGATE_BWRAP_PATH', 'bin/bwrap', /TOOLGATE_BWRAP_PATH must be a command name or an absolute path/],
    ['TOOLGATE_SANDBOX_MAX_PROCESSES', '4', /TOOLGATE_SANDBOX_MAX_PROCESSES must be a whole number from 8 to 65536/],
    ['TOOLGATE_SANDBOX_MAX_PROCESSES', '-1', /TOOLGATE_SANDBOX_MAX_PROCESSES/],
    ['TOOLGATE_SANDBOX_MAX_PROCESSES', 'unlimited', /TOOLGATE_SANDBOX_MAX_PROCESSES/],
    ['TOOLGATE_SANDBOX_MEMORY_MB', '32', /TOOLGATE_SANDBOX_MEMORY_MB must be a whole number from 64 to 1048576/],
    ['TOOLGATE_SANDBOX_MEMORY_MB', '1G', /TOOLGATE_SANDBOX_MEMORY_MB/],
    ['TOOLGATE_SANDBOX_MEMORY_MB', '0x400', /TOOLGATE_SANDBOX_MEMORY_MB/],
    ['TOOLGATE_WEB_SEARCH_PROVIDER', 'bing', /TOOLGATE_WEB_SEARCH_PROVIDER must be one of/],
    ['TOOLGATE_WEB_SEARCH_MAX_RESULTS', '11', /TOOLGATE_WEB_SEARCH_MAX_RESULTS must be a whole number from 1 to 10/],
    ['TOOLGATE_WEB_SEARCH_BASE_URL', 'ftp://x', /TOOLGATE_WEB_SEARCH_BASE_URL must use http or https/],
    ['TOOLGATE_HOST', 'a b', /TOOLGATE_HOST/],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  describe('TOOLGATE_PRINCIPALS=oidc', () => {
    const ok = { TOOLGATE_PRINCIPALS: 'oidc', TOOLGATE_OIDC_ISSUER: 'https://id.example.com/realms/agents', TOOLGATE_OIDC_AUDIENCE: 'https://toolgate.example.com/mcp', TOOLGATE_PRINCIPALS_FILE: '/etc/toolgate/policy.json' };

    it('reads the issuer, audience, claim names, algorithms, skew and budget, with defaults', () => {
      expect(loadConfig(ok, '/srv').oidc).toEqual({
        issuer: 'https://id.example.com/realms/agents',
        audience: 'https://toolgate.example.com/mcp',
        idClaim: 'sub',
        tenantClaim: 'tenant',
        rolesClaim: 'roles',
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        clockSkewSeconds: 30,
        jwksHosts: [],
        scopes: false,
      });
      expect(loadConfig({ ...ok, TOOLGATE_OIDC_SCOPES: 'on' }, '/srv').oidc?.scopes).toBe(true);
      expect(() => loadConfig({ ...ok, TOOLGATE_OIDC_SCOPES: 'yes' }, '/srv')).toThrow(/TOOLGATE_OIDC_SCOPES must be one of on, off/);
      const custom = loadConfig(
        { ...ok, TOOLGATE_OIDC_ID_CLAIM: 'client_id', TOOLGATE_OIDC_TENANT_CLAIM: 'https://toolgate/tenant', TOOLGATE_OIDC_ROLES_CLAIM: 'groups', TOOLGATE_OIDC_ALGORITHMS: 'ES256', TOOLGATE_OIDC_CLOCK_SKEW_SECONDS: '5', TOOLGATE_OIDC_BUDGET: '600/3600', TOOLGATE_OIDC_JWKS_HOSTS: 'keys.example.com' },
        '/srv',
      ).oidc;
      expect(custom).toMatchObject({ idClaim: 'client_id', tenantClaim: 'https://toolgate/tenant', rolesClaim: 'groups', algorithms: ['ES256'], clockSkewSeconds: 5, budget: { calls: 600, windowSeconds: 3600 }, jwksHosts: ['keys.example.com'] });
      expect(loadConfig({}, '/srv')).toMatchObject({ principals: 'file' });
      expect(loadConfig({}, '/srv').oidc).toBeUndefined();
    });

    it('accepts http only on a loopback issuer', () => {
      // The URL parser reads 2130706433 and 127.1 as 127.0.0.1: loopback spellings, accepted.
      for (const issuer of ['http://127.0.0.1:4444', 'http://127.9.9.9/x', 'http://[::1]:80/', 'http://2130706433', 'http://127.1']) {
        expect(loadConfig({ ...ok, TOOLGATE_OIDC_ISSUER: issuer }, '/srv').oidc?.issuer).toBe(issuer);
      }
      for (const issuer of ['http://id.example.com', 'http://localhost:4444', 'http://10.0.0.1', 'http://0.0.0.0', 'http://[::ffff:127.0.0.1]', 'http://127.0.0.1.nip.io']) {
        expect(() => loadConfig({ ...ok, TOOLGATE_OIDC_ISSUER: issuer }, '/srv'), issuer).toThrow(/must be https; http is accepted only on a loopback address/);
      }
    });

    it.each([
      [{ TOOLGATE_OIDC_ISSUER: undefined }, /TOOLGATE_OIDC_ISSUER is required/],
      [{ TOOLGATE_OIDC_AUDIENCE: undefined }, /TOOLGATE_OIDC_AUDIENCE is required/],
      [{ TOOLGATE_PRINCIPALS_FILE: undefined }, /needs TOOLGATE_PRINCIPALS_FILE/],
      [{ TOOLGATE_OIDC_ISSUER: 'not a url' }, /absolute https URL/],
      [{ TOOLGATE_OIDC_ISSUER: 'ftp://id.example.com' }, /https/],
      [{ TOOLGATE_OIDC_ISSUER: 'https://user:pw@id.example.com' }, /credentials/],
      [{ TOOLGATE_OIDC_ISSUER: 'https://id.example.com/?a=1' }, /query or fragment/],
      [{ TOOLGATE_OIDC_ALGORITHMS: 'RS256,none' }, /'none' is not accepted/],
      [{ TOOLGATE_OIDC_ALGORITHMS: 'HS256' }, /'HS256' is not accepted.*never none or HS\*/],
      [{ TOOLGATE_OIDC_ALGORITHMS: 'rs256' }, /'rs256' is not accepted/],
      [{ TOOLGATE_OIDC_ROLES_CLAIM: 'roles claim' }, /TOOLGATE_OIDC_ROLES_CLAIM must be a claim name/],
      [{ TOOLGATE_OIDC_CLOCK_SKEW_SECONDS: '3600' }, /from 0 to 300/],
      [{ TOOLGATE_OIDC_BUDGET: '10' }, /TOOLGATE_OIDC_BUDGET must be <calls>\/<windowSeconds>/],
      [{ TOOLGATE_OIDC_BUDGET: '10/0' }, /TOOLGATE_OIDC_BUDGET must be/],
      [{ TOOLGATE_PRINCIPALS: 'ldap' }, /TOOLGATE_PRINCIPALS must be one of file, oidc/],
    ])('refuses %o with a message naming the setting', (change, message) => {
      const env: Record<string, string | undefined> = { ...ok, ...change };
      expect(() => loadConfig(env, '/srv')).toThrow(message);
    });

    it('refuses OIDC settings without TOOLGATE_PRINCIPALS=oidc, rather than ignore them', () => {
      expect(() => loadConfig({ TOOLGATE_OIDC_ISSUER: 'https://id.example.com' }, '/srv')).toThrow(/TOOLGATE_OIDC_ISSUER is set, but TOOLGATE_PRINCIPALS is not oidc/);
    });
  });

  it('reads the sandbox caps', () => {
    expect(loadConfig({ TOOLGATE_SANDBOX_MAX_PROCESSES: '64', TOOLGATE_SANDBOX_MEMORY_MB: '512' })).toMatchObject({ sandboxMaxProcesses: 64, sandboxMemoryMb: 512 });
  });

  it('needs DATABASE_URL for the postgres adapters', () => {
    expect(() => loadConfig({ TOOLGATE_STORE: 'postgres' })).toThrow(/DATABASE_URL is required/);
    expect(() => loadConfig({ TOOLGATE_AUDIT: 'postgres', DATABASE_URL: 'mysql://x' })).toThrow(/postgres:\/\//);
    expect(loadConfig({ TOOLGATE_AUDIT: 'postgres', DATABASE_URL: 'postgres://u:p@h/db' }).audit).toBe('postgres');
  });

  it('never echoes a secret value in its errors', () => {
    const secret = 'short-secret-key';
    let message = '';
    try {
      loadConfig({ TOOLGATE_AUDIT_HMAC_KEY: secret });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/TOOLGATE_AUDIT_HMAC_KEY must be at least 32 characters/);
    expect(message).not.toContain(secret);
  });

  it('marks a shell tier that was set as explicit, so a tier that cannot run stops the server', () => {
    expect(loadConfig({ TOOLGATE_SHELL_TIER: 'bwrap' })).toMatchObject({ shellTier: 'bwrap', shellTierExplicit: true });
    expect(loadConfig({ TOOLGATE_SHELL_TIER: 'unisolated' })).toMatchObject({ shellTier: 'unisolated', shellTierExplicit: true });
    expect(loadConfig({ TOOLGATE_SHELL_TIER: '  ' })).toMatchObject({ shellTier: 'bwrap', shellTierExplicit: false });
  });

  // The unisolated tier used to be called "subprocess"; an old deployment must not keep it silently.
  it('refuses the old tier name subprocess, saying it is unisolated and what to set instead', () => {
    expect(() => loadConfig({ TOOLGATE_SHELL_TIER: 'subprocess' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOOLGATE_SHELL_TIER: 'subprocess' })).toThrow(
      "TOOLGATE_SHELL_TIER=subprocess was renamed 'unisolated': bash and git run as host processes that can read and signal whatever the server's user can",
    );
    expect(() => loadConfig({ TOOLGATE_SHELL_TIER: ' subprocess ' })).toThrow(/was renamed 'unisolated'/);
    for (const spelling of ['Subprocess', 'SUBPROCESS', 'sub-process', 'tier1']) {
      expect(() => loadConfig({ TOOLGATE_SHELL_TIER: spelling })).toThrow(/TOOLGATE_SHELL_TIER must be one of bwrap, container, unisolated/);
    }
  });

  describe('secrets from files (*_FILE)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-config-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const key = 'k'.repeat(40);
    const put = (name: string, content: string) => {
      writeFileSync(join(dir, name), content, { mode: 0o600 });
      return join(dir, name);
    };

    it('reads the HMAC key, the web search API key and DATABASE_URL from files, dropping one trailing newline', () => {
      const config = loadConfig({
        TOOLGATE_AUDIT_HMAC_KEY_FILE: put('hmac', `${key}\n`),
        TOOLGATE_WEB_SEARCH_API_KEY_FILE: put('api', 'tvly-123\r\n'),
        DATABASE_URL_FILE: put('db', 'postgres://u:p@h/db'),
        TOOLGATE_AUDIT: 'postgres',
      });
      expect(config.auditHmacKey).toBe(key);
      expect(config.webSearch.apiKey).toBe('tvly-123');
      expect(config.databaseUrl).toBe('postgres://u:p@h/db');
    });

    it('refuses a FIFO, socket or device without waiting on it (a FIFO would block the start for good)', () => {
      const fifo = join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      for (const name of ['TOOLGATE_AUDIT_HMAC_KEY_FILE', 'TOOLGATE_WEB_SEARCH_API_KEY_FILE', 'DATABASE_URL_FILE']) {
        for (const path of [fifo, '/dev/zero', '/dev/null']) {
          expect(() => loadConfig({ [name]: path })).toThrow(new RegExp(`^${name} cannot be read \\(not a regular file: a FIFO, socket or device\\)`));
        }
      }
    });

    it('shows a relative file as set, not resolved against the working directory', () => {
      expect(() => loadConfig({ TOOLGATE_AUDIT_HMAC_KEY_FILE: 'absent-rel' }, dir)).toThrow(/cannot be read \(ENOENT\): absent-rel$/);
    });

    it('resolves a relative file against the working directory', () => {
      put('rel-hmac', key);
      expect(loadConfig({ TOOLGATE_AUDIT_HMAC_KEY_FILE: 'rel-hmac' }, dir).auditHmacKey).toBe(key);
    });

    it('refuses both spellings at once, a missing or empty file, and a short key from a file, never showing the value', () => {
      const short = put('short', 'short-secret-in-a-file\n');
      const cases: [Record<string, string>, RegExp][] = [
        [{ TOOLGATE_AUDIT_HMAC_KEY: key, TOOLGATE_AUDIT_HMAC_KEY_FILE: put('both', key) }, /set TOOLGATE_AUDIT_HMAC_KEY or TOOLGATE_AUDIT_HMAC_KEY_FILE, not both/],
        [{ TOOLGATE_AUDIT_HMAC_KEY_FILE: join(dir, 'absent') }, /TOOLGATE_AUDIT_HMAC_KEY_FILE cannot be read \(ENOENT\)/],
        [{ TOOLGATE_AUDIT_HMAC_KEY_FILE: dir }, /TOOLGATE_AUDIT_HMAC_KEY_FILE cannot be read \(EISDIR\)/],
        [{ TOOLGATE_WEB_SEARCH_API_KEY_FILE: put('empty', '\n') }, /TOOLGATE_WEB_SEARCH_API_KEY_FILE is empty/],
        [{ TOOLGATE_AUDIT_HMAC_KEY_FILE: short }, /TOOLGATE_AUDIT_HMAC_KEY must be at least 32 characters/],
        [{ DATABASE_URL_FILE: put('mysql', 'mysql://root:hunter2@db/x') }, /DATABASE_URL must be a postgres/],
        [{ TOOLGATE_AUDIT_HMAC_KEY_FILE: put('huge', 'k'.repeat(70 * 1024)) }, /TOOLGATE_AUDIT_HMAC_KEY_FILE is larger than 64 KiB/],
      ];
      for (const [env, message] of cases) {
        let text = '';
        try {
          loadConfig(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          text = (error as Error).message;
        }
        expect(text).toMatch(message);
        expect(text).not.toContain('short-secret-in-a-file');
        expect(text).not.toContain('hunter2');
        expect(text).not.toContain(key);
      }
    });
  });

  it('parses lists and booleans', () => {
    const config = loadConfig({
      TOOLGATE_EGRESS_ENABLED: 'yes',
      TOOLGATE_ALLOWED_EGRESS_HOSTS: ' example.com, api.example.org ,,',
      TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.0/8',
    });
    expect(config.egress).toEqual({ enabled: true, allowedHosts: ['example.com', 'api.example.org'], allowAny: false, allowedCidrs: ['127.0.0.0/8'] });
  });

  describe('egress host list faults (TOOLGATE_ALLOWED_EGRESS_HOSTS)', () => {
    it.each([
      ['https://api.example.com', /is a URL/],
      ['*.example.com', /wildcard/],
      ['example.com:8443', /contains a port/],
      ['me@example.com', /userinfo/],
      ['example.com/v1', /contains a path/],
      ['exa mple.com', /contains a space/],
      ['-bad.example.com', /invalid label/],
      ['a..b', /empty label/],
      ['0x7f.1', /looks like an IP address/],
      ['[fe80::1%eth0]', /not a valid IPv6 address|not an IPv6 address/],
    ])('refuses %s at load, naming the variable', (entry, message) => {
      const load = () => loadConfig({ TOOLGATE_ALLOWED_EGRESS_HOSTS: `ok.example, ${entry}` });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/^TOOLGATE_ALLOWED_EGRESS_HOSTS: /);
      expect(load).toThrow(message);
    });

    it('keeps each entry in the one spelling the egress gate compares', () => {
      expect(loadConfig({ TOOLGATE_ALLOWED_EGRESS_HOSTS: 'Example.COM., [2001:DB8::1], bücher.example' }).egress.allowedHosts).toEqual([
        'example.com',
        '2001:db8::1',
        'xn--bcher-kva.example',
      ]);
    });
  });

  describe('path settings as the operator wrote them (for start-up messages)', () => {
    it('keeps the values as set, unresolved, and nothing for unset ones', () => {
      const config = loadConfig({ TOOLGATE_DATA_DIR: 'data', TOOLGATE_WORKSPACE_ROOT: ' ws ', TOOLGATE_PRINCIPALS_FILE: 'p.json' }, '/srv/app');
      expect(config.dataDir).toBe('/srv/app/data');
      expect(config.pathsAsSet).toEqual({ dataDir: 'data', workspaceRoot: 'ws', principalsFile: 'p.json' });
      expect(loadConfig({}, '/srv/app').pathsAsSet).toEqual({});
    });

    it.each(['TOOLGATE_DATA_DIR', 'TOOLGATE_WORKSPACE_ROOT', 'TOOLGATE_PRINCIPALS_FILE', 'TOOLGATE_MCP_SERVERS_FILE'])('refuses a NUL in %s, naming it', (name) => {
      expect(() => loadConfig({ [name]: 'a\0b' })).toThrow(new RegExp(`^${name} must not contain a NUL character$`));
    });
  });
});

describe('who may address the HTTP face: TOOLGATE_ALLOWED_HOSTS, TOOLGATE_ALLOWED_ORIGINS, TOOLGATE_PUBLIC_URL', () => {
  it('defaults to no extra hosts, no CORS origins and no public URL', () => {
    const config = loadConfig({});
    expect(config.allowedHosts).toEqual([]);
    expect(config.allowedOrigins).toEqual([]);
    expect(config).not.toHaveProperty('publicUrl');
  });

  it('keeps each host and origin in the one spelling the guard compares', () => {
    const config = loadConfig({
      TOOLGATE_ALLOWED_HOSTS: ' Toolgate.LAN, 10.0.0.5 ,::1,[2001:DB8:0:0::7],,',
      TOOLGATE_ALLOWED_ORIGINS: 'https://Console.Example.com/, http://localhost:5173, https://x.example:443',
      TOOLGATE_PUBLIC_URL: 'https://gateway.example.com/toolgate',
    });
    expect(config.allowedHosts).toEqual(['toolgate.lan', '10.0.0.5', '[::1]', '[2001:db8::7]']);
    expect(config.allowedOrigins).toEqual(['https://console.example.com', 'http://localhost:5173', 'https://x.example']);
    expect(config.publicUrl).toBe('https://gateway.example.com/toolgate');
  });

  it.each([
    ['TOOLGATE_ALLOWED_HOSTS', '*', /TOOLGATE_ALLOWED_HOSTS entry '\*' is a wildcard/],
    ['TOOLGATE_ALLOWED_HOSTS', '*.example.com', /TOOLGATE_ALLOWED_HOSTS entry .* wildcard/],
    ['TOOLGATE_ALLOWED_HOSTS', 'toolgate.lan:8765', /TOOLGATE_ALLOWED_HOSTS entry 'toolgate.lan:8765' must not carry a port/],
    ['TOOLGATE_ALLOWED_HOSTS', '[::1]:8765', /TOOLGATE_ALLOWED_HOSTS .* port/],
    ['TOOLGATE_ALLOWED_HOSTS', 'https://toolgate.lan', /TOOLGATE_ALLOWED_HOSTS .* without scheme or path/],
    ['TOOLGATE_ALLOWED_HOSTS', '2130706433', /TOOLGATE_ALLOWED_HOSTS .* canonical IPv4/],
    ['TOOLGATE_ALLOWED_HOSTS', '0x7f000001', /TOOLGATE_ALLOWED_HOSTS .* canonical IPv4/],
    ['TOOLGATE_ALLOWED_HOSTS', '127.0.0.01', /TOOLGATE_ALLOWED_HOSTS .* canonical IPv4/],
    ['TOOLGATE_ALLOWED_HOSTS', 'toolgate.lan.', /TOOLGATE_ALLOWED_HOSTS .* ends with a dot/],
    ['TOOLGATE_ALLOWED_HOSTS', 'under_score.lan', /TOOLGATE_ALLOWED_HOSTS .* not a valid DNS name/],
    ['TOOLGATE_ALLOWED_HOSTS', '0.0.0.0', /TOOLGATE_ALLOWED_HOSTS .* any-address/],
    ['TOOLGATE_ALLOWED_HOSTS', '::', /TOOLGATE_ALLOWED_HOSTS .* any-address/],
    ['TOOLGATE_ALLOWED_ORIGINS', '*', /TOOLGATE_ALLOWED_ORIGINS entry '\*' is a wildcard/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'null', /TOOLGATE_ALLOWED_ORIGINS entry 'null'/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'console.example.com', /TOOLGATE_ALLOWED_ORIGINS .* must be an origin/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'https://console.example.com/app', /TOOLGATE_ALLOWED_ORIGINS .* without path/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'https://u:p@console.example.com', /TOOLGATE_ALLOWED_ORIGINS .* credentials/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'ftp://console.example.com', /TOOLGATE_ALLOWED_ORIGINS .* must be an origin/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'http://0.0.0.0:8765', /TOOLGATE_ALLOWED_ORIGINS .* any-address/],
    ['TOOLGATE_ALLOWED_ORIGINS', 'http://2130706433', /TOOLGATE_ALLOWED_ORIGINS .* canonical IPv4/],
    ['TOOLGATE_PUBLIC_URL', 'gateway.example.com', /TOOLGATE_PUBLIC_URL must be an absolute http\(s\) URL/],
    ['TOOLGATE_PUBLIC_URL', 'ftp://gateway.example.com', /TOOLGATE_PUBLIC_URL must use http or https/],
    ['TOOLGATE_PUBLIC_URL', 'https://u:p@gateway.example.com', /TOOLGATE_PUBLIC_URL must not contain credentials/],
    ['TOOLGATE_PUBLIC_URL', 'https://gateway.example.com/?a=1', /TOOLGATE_PUBLIC_URL must not have a query or fragment/],
    ['TOOLGATE_PUBLIC_URL', 'http://0.0.0.0:8765', /TOOLGATE_PUBLIC_URL must name a host clients use/],
    ['TOOLGATE_PUBLIC_URL', 'http://under_score.example', /TOOLGATE_PUBLIC_URL must name a host clients use/],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('never echoes more than 60 characters of a bad entry', () => {
    const long = `${'a'.repeat(300)}_`;
    let message = '';
    try {
      loadConfig({ TOOLGATE_ALLOWED_HOSTS: long });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^TOOLGATE_ALLOWED_HOSTS entry/);
    expect(message).not.toContain(long);
  });

  describe('MCP approvals: TOOLGATE_MCP_APPROVAL_WAIT_MS and TOOLGATE_MCP_STATE_KEY', () => {
    it('holds an MCP call up to 5 minutes by default and draws the state key per process', () => {
      const config = loadConfig({});
      expect(config.mcpApprovalWaitMs).toBe(300_000);
      expect(config.mcpStateKey).toBeUndefined();
    });

    it.each([
      ['0', 0],
      ['1', 1],
      ['3600000', 3_600_000],
    ])('accepts a wait of %s ms', (value, ms) => expect(loadConfig({ TOOLGATE_MCP_APPROVAL_WAIT_MS: value }).mcpApprovalWaitMs).toBe(ms));

    it.each(['3600001', '-1', '5m', '1e3', '0x10', '30.5', '300000ms'])('refuses a wait of %s, naming the variable and the range', (value) => {
      expect(() => loadConfig({ TOOLGATE_MCP_APPROVAL_WAIT_MS: value })).toThrow(/^TOOLGATE_MCP_APPROVAL_WAIT_MS must be a whole number from 0 to 3600000/);
    });

    it('decodes a state key given as standard or URL-safe base64, directly or as a file', () => {
      const bytes = Buffer.alloc(32, 0xfb);
      expect(Buffer.from(loadConfig({ TOOLGATE_MCP_STATE_KEY: bytes.toString('base64') }).mcpStateKey ?? [])).toEqual(bytes);
      expect(Buffer.from(loadConfig({ TOOLGATE_MCP_STATE_KEY: bytes.toString('base64url') }).mcpStateKey ?? [])).toEqual(bytes);
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-state-key-'));
      try {
        writeFileSync(join(dir, 'key'), `${bytes.toString('base64')}\n`);
        const config = loadConfig({ TOOLGATE_MCP_STATE_KEY_FILE: 'key' }, dir);
        expect(Buffer.from(config.mcpStateKey ?? [])).toEqual(bytes);
        expect(config.secretFiles).toContainEqual({ variable: 'TOOLGATE_MCP_STATE_KEY_FILE', path: join(dir, 'key'), asSet: 'key' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it.each([
      ['too short: 31 bytes', Buffer.alloc(31, 1).toString('base64'), /must decode to at least 32 bytes \(got 31/],
      ['not base64', 'this is not base64 but is long enough!!', /must be base64/],
      ['hex, which is not base64 of 32 bytes', 'a'.repeat(40), /must decode to at least 32 bytes/],
      ['base64 with a character outside both alphabets', `${Buffer.alloc(40, 1).toString('base64').slice(0, 40)}*`, /must be base64/],
      ['padding in the middle', `AAAA=AAAA${'A'.repeat(40)}`, /must be base64/],
    ])('refuses a state key that is %s, never echoing it', (_name, value, message) => {
      let text = '';
      try {
        loadConfig({ TOOLGATE_MCP_STATE_KEY: value });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        text = (error as Error).message;
      }
      expect(text).toMatch(/^TOOLGATE_MCP_STATE_KEY /);
      expect(text).toMatch(message);
      expect(text).not.toContain(value);
    });
  });
});

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])('%s is loopback', (h) => expect(isLoopbackHost(h)).toBe(true));
  it.each(['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.nip.io'])('%s is not', (h) => expect(isLoopbackHost(h)).toBe(false));
});
