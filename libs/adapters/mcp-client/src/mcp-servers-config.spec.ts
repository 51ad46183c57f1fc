import { describe, expect, it } from 'vitest';
import { MCP_CONFIG_LIMITS, McpConfigError, parseMcpServersFile } from './mcp-servers-config.js';

const SECRET = 'sk-live-do-not-print-9f8e7d';
const server = (over: Record<string, unknown> = {}) => ({ name: 'files', command: 'node', args: ['server.js'], tier: 'unisolated', ...over });
const file = (...servers: unknown[]) => JSON.stringify({ servers });

function fault(text: string): string {
  try {
    parseMcpServersFile(text);
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain(SECRET);
    return message;
  }
  throw new Error('expected the file to be refused');
}

describe('parseMcpServersFile', () => {
  it('accepts the documented shape and fills the optional parts', () => {
    const config = parseMcpServersFile(
      file(
        server({ env: { API_KEY: SECRET } }),
        server({ name: 'web-2', args: undefined, tier: 'bwrap', risk: 'low', timeoutMs: 5000, permissions: [{ type: 'network', scope: 'api.example.com' }] }),
      ),
    );
    expect(config).toEqual({
      servers: [
        { name: 'files', command: 'node', args: ['server.js'], env: { API_KEY: SECRET }, tier: 'unisolated' },
        {
          name: 'web-2',
          command: 'node',
          args: [],
          env: {},
          tier: 'bwrap',
          risk: 'low',
          timeoutMs: 5000,
          permissions: [{ type: 'network', scope: 'api.example.com' }],
        },
      ],
      remotes: [],
    });
    expect(parseMcpServersFile('{"servers":[]}')).toEqual({ servers: [], remotes: [] });
  });

  it('refuses text that is not JSON, saying where without quoting the text', () => {
    expect(fault(`{"servers":[{"name":"files","env":{"K":"${SECRET}" x}}]}`)).toMatch(
      /^MCP servers file is not valid JSON: Expected ',' or '}' after property value \(line 1, column \d+\)$/,
    );
    expect(fault(`{"servers":\n [ "${SECRET}`)).toMatch(/^MCP servers file is not valid JSON: Unterminated string \(line 2, column \d+\)$/);
    expect(fault(SECRET)).toBe('MCP servers file is not valid JSON');
    expect(fault('')).toBe('MCP servers file is not valid JSON');
  });

  it('refuses a huge file before parsing it', () => {
    const huge = JSON.stringify({ servers: [server({ args: ['x'.repeat(MCP_CONFIG_LIMITS.fileBytes)] })] });
    expect(fault(huge)).toMatch(/^MCP servers file is \d+ bytes; the limit is 1048576$/);
  });

  it('refuses a wrong top level', () => {
    expect(fault('[]')).toBe('MCP servers file: the top level must be an object {"servers": [...]}');
    expect(fault('{"servers":{}}')).toBe('MCP servers file: "servers" must be an array');
    expect(fault('{"servers":[],"extra":1}')).toBe('MCP servers file: top level: unknown key "extra"; allowed keys are "servers"');
    expect(fault(JSON.stringify({ servers: Array.from({ length: 65 }, (_, i) => server({ name: `s${i}` })) }))).toBe(
      'MCP servers file: 65 servers; the limit is 64',
    );
  });

  it('names the server by index and name in every fault', () => {
    expect(fault(file(server(), 'files'))).toBe('MCP servers file: servers[1]: must be an object');
    expect(fault(file(server({ name: undefined })))).toBe('MCP servers file: servers[0]: "name" is required and must be a string');
    expect(fault(file(server({ name: 'Files!' })))).toBe(
      'MCP servers file: servers[0]: name "Files!" must match ^[a-z][a-z0-9_-]{0,31}$ (lowercase, starts with a letter, at most 32 characters)',
    );
    expect(fault(file(server({ name: 'a'.repeat(33) })))).toContain('must match');
    expect(fault(file(server({ cmd: 'node' })))).toBe(
      'MCP servers file: servers[0] ("files"): unknown key "cmd"; allowed keys are "name", "command", "args", "env", "tier", "risk", "timeoutMs", "permissions", "readOnlyPaths"',
    );
    expect(fault('{"servers":[{"name":"files","command":"node","tier":"unisolated","__proto__":{"polluted":true}}]}')).toContain(
      'unknown key "__proto__"',
    );
  });

  it('refuses duplicate names, and names that register the same tools', () => {
    expect(fault(file(server(), server({ name: 'web' }), server()))).toBe(
      'MCP servers file: servers[2] ("files"): duplicate name; servers[0] already uses it',
    );
    expect(fault(file(server({ name: 'my-files' }), server({ name: 'my_files' })))).toBe(
      'MCP servers file: servers[1] ("my_files"): name clashes with servers[0] ("my-files"): both register tools as "my_files__…"',
    );
  });

  describe('tool-name shadowing across the server separator', () => {
    it.each(['gh__x', 'gh_', 'gh-', 'gh--x', 'gh-_x', 'gh_-x', 'a___b'])('refuses the server name %j, saying why', (name) => {
      expect(fault(file(server({ name })))).toBe(
        `MCP servers file: servers[0] ("${name}"): name must not hold two of '_' or '-' in a row or end with one: "__" separates the server from its tool names, so such a server could take another server's tool names`,
      );
    });

    it.each(['gh', 'gh_x', 'gh-x', 'my-files-2'])('accepts the server name %j', (name) => {
      expect(() => parseMcpServersFile(file(server({ name })))).not.toThrow();
    });
  });

  it('refuses a command that is not a usable string, without quoting it', () => {
    expect(fault(file(server({ command: ['node'] })))).toBe('MCP servers file: servers[0] ("files"): "command" is required and must be a string');
    expect(fault(file(server({ command: undefined })))).toContain('"command" is required');
    expect(fault(file(server({ command: ' ' })))).toContain('"command" must be a non-empty string');
    expect(fault(file(server({ command: `node\u0000${SECRET}` })))).toContain('without NUL');
  });

  it('refuses args that are not an array of strings, without quoting them', () => {
    expect(fault(file(server({ args: 'server.js' })))).toBe('MCP servers file: servers[0] ("files"): "args" must be an array of strings');
    expect(fault(file(server({ args: ['--token', SECRET, 7] })))).toBe('MCP servers file: servers[0] ("files"): args[2] must be a string, not a number');
    expect(fault(file(server({ args: [null] })))).toContain('args[0] must be a string, not null');
    expect(fault(file(server({ args: Array(257).fill('a') })))).toContain('"args" has 257 items; the limit is 256');
  });

  it('refuses env that is not an object of strings and never prints a value', () => {
    expect(fault(file(server({ env: [SECRET] })))).toBe('MCP servers file: servers[0] ("files"): "env" must be an object of string values');
    expect(fault(file(server({ env: { API_KEY: SECRET, PORT: 8080 } })))).toBe(
      'MCP servers file: servers[0] ("files"): env.PORT must be a string, not a number',
    );
    expect(fault(file(server({ env: { API_KEY: { value: SECRET } } })))).toContain('env.API_KEY must be a string, not an object');
    expect(fault(file(server({ env: { 'BAD-NAME': SECRET } })))).toContain('env name "BAD-NAME" must match');
    expect(fault(file(server({ env: { TOKEN: `${SECRET}\u0000` } })))).toBe(
      `MCP servers file: servers[0] ("files"): env.TOKEN must be at most 32768 characters without NUL (value not shown)`,
    );
    expect(fault(file(server({ env: { TOKEN: SECRET }, tier: 'docker' })))).toContain('tier "docker" is not one of');
  });

  it('refuses a missing or unknown tier', () => {
    expect(fault(file(server({ tier: undefined })))).toBe(
      'MCP servers file: servers[0] ("files"): "tier" is required: one of "bwrap", "unisolated"',
    );
    expect(fault(file(server({ tier: 'inprocess' })))).toBe(
      'MCP servers file: servers[0] ("files"): tier "inprocess" is not one of "bwrap", "unisolated"',
    );
    expect(fault(file(server({ tier: 2 })))).toContain('tier a number is not one of');
  });

  // The unisolated tier used to be called "subprocess"; an old file must not keep it silently.
  it('refuses the old tier name "subprocess", saying it is unisolated and what it is called now', () => {
    const message = fault(file(server({ tier: 'subprocess', env: { TOKEN: SECRET } })));
    expect(message).toBe(
      'MCP servers file: servers[0] ("files"): tier "subprocess" was renamed "unisolated": it runs the server as a host process that can read and signal whatever Toolgate\'s user can; use "bwrap" to sandbox it, or write "unisolated" to accept that',
    );
    for (const spelling of ['Subprocess', 'SUBPROCESS', ' subprocess', 'subprocess ', 'sub-process']) {
      expect(fault(file(server({ tier: spelling })))).toContain('is not one of "bwrap", "unisolated"');
    }
  });

  it('refuses an unknown risk, a bad timeout and malformed permissions', () => {
    expect(fault(file(server({ risk: 'none' })))).toBe(
      'MCP servers file: servers[0] ("files"): risk "none" is not one of "low", "medium", "high", "critical"',
    );
    for (const timeoutMs of [0, 50, 1.5, '1000', 10 * 60_000 + 1]) {
      expect(fault(file(server({ timeoutMs })))).toBe(
        'MCP servers file: servers[0] ("files"): "timeoutMs" must be an integer from 100 to 600000',
      );
    }
    expect(fault(file(server({ permissions: { type: 'exec' } })))).toContain('"permissions" must be an array');
    expect(fault(file(server({ permissions: [{ type: 'root', scope: '*' }] })))).toBe(
      'MCP servers file: servers[0] ("files"): permissions[0]: type "root" is not one of "filesystem", "network", "exec", "env", "messaging", "memory"',
    );
    expect(fault(file(server({ permissions: [{ type: 'exec', scope: '' }] })))).toContain('permissions[0]: "scope" must be a non-empty string');
    expect(fault(file(server({ permissions: [{ type: 'exec', scope: 'x', why: 'y' }] })))).toContain(
      'permissions[0]: unknown key "why"',
    );
  });

  describe('remote servers (an entry with "url")', () => {
    const remote = (over: Record<string, unknown> = {}) => ({ name: 'docs', url: 'https://docs.example.com/mcp', ...over });
    const tokenHeader = { Authorization: { file: '/run/secrets/docs-token', prefix: 'Bearer ' } };

    it('accepts a URL, file-backed headers and the shared trust keys, beside stdio servers', () => {
      const config = parseMcpServersFile(
        file(server(), remote({ headers: { ...tokenHeader, 'X-Api-Key': { file: '/run/secrets/k' } }, risk: 'medium', timeoutMs: 5000 }), remote({ name: 'wiki', url: 'http://127.0.0.1:9000/mcp?x=1' })),
      );
      expect(config.servers.map((s) => s.name)).toEqual(['files']);
      expect(config.remotes).toEqual([
        {
          name: 'docs',
          url: 'https://docs.example.com/mcp',
          headers: { authorization: { file: '/run/secrets/docs-token', prefix: 'Bearer ' }, 'x-api-key': { file: '/run/secrets/k' } },
          risk: 'medium',
          timeoutMs: 5000,
        },
        { name: 'wiki', url: 'http://127.0.0.1:9000/mcp?x=1', headers: {} },
      ]);
    });

    it('refuses an entry with both "command" and "url", and one with neither', () => {
      expect(fault(file(remote({ command: 'node' })))).toBe(
        'MCP servers file: servers[0] ("docs"): has both "command" and "url": a server is either started by Toolgate ("command") or reached over HTTP ("url")',
      );
      expect(fault(file({ name: 'docs' }))).toBe(
        'MCP servers file: servers[0] ("docs"): "command" is required for a server Toolgate starts over stdio; a remote server over Streamable HTTP has "url" instead',
      );
    });

    it('refuses the keys of a started server on a remote one, saying why', () => {
      for (const key of ['args', 'env', 'tier', 'readOnlyPaths']) {
        expect(fault(file(remote({ [key]: key === 'env' ? { TOKEN: SECRET } : [SECRET] })))).toMatch(
          new RegExp(`^MCP servers file: servers\\[0\\] \\("docs"\\): "${key}" is for a server Toolgate starts \\("command"\\); a remote server \\("url"\\) runs on its own host`),
        );
      }
      expect(fault(file(server({ headers: tokenHeader })))).toBe(
        'MCP servers file: servers[0] ("files"): "headers" is for a remote server (one with "url"), not one started with "command"',
      );
      expect(fault(file(remote({ token: SECRET })))).toBe(
        'MCP servers file: servers[0] ("docs"): unknown key "token"; allowed keys are "name", "url", "headers", "risk", "timeoutMs", "permissions"',
      );
    });

    describe('URL spellings that are refused', () => {
      it.each([
        ['ftp://docs.example.com/mcp', '"url" must be http: or https:, not "ftp:"'],
        ['file:///etc/passwd', '"url" must be http: or https:, not "file:"'],
        ['javascript:alert(1)', '"url" must be http: or https:, not "javascript:"'],
        ['ws://docs.example.com/mcp', '"url" must be http: or https:, not "ws:"'],
        ['/mcp', '"url" is not an absolute URL'],
        ['docs.example.com/mcp', '"url" is not an absolute URL'],
        ['', '"url" must be a non-empty string'],
        ['https://docs.example.com/mcp#frag', '"url" must not have a fragment'],
        ['https://docs.example.com/mcp#', '"url" must not have a fragment'],
        [`https://${'a'.repeat(2100)}.example.com/`, '"url" has 2121 characters; the limit is 2048'],
      ])('%j', (url, why) => {
        expect(fault(file(remote({ url })))).toContain(`servers[0] ("docs"): ${why}`);
      });

      it.each([
        `https://user:${SECRET}@docs.example.com/mcp`,
        `https://${SECRET}@docs.example.com/mcp`,
        `https://:${SECRET}@docs.example.com/mcp`,
        `HTTPS://u:${SECRET}@docs.example.com`,
        `https://@docs.example.com/mcp`,
      ])('credentials in the URL %#, never echoed', (url) => {
        expect(fault(file(remote({ url })))).toBe(
          'MCP servers file: servers[0] ("docs"): "url" must not carry credentials (user:password@host); put a credential in a file named in "headers"',
        );
      });

      it('refuses a URL that is not a string', () => {
        expect(fault(file(remote({ url: ['https://docs.example.com'] })))).toContain('"url" must be a non-empty string');
      });
    });

    describe('header injection and headers the connection owns', () => {
      it.each(['Host', 'host', 'HOST', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer', 'Proxy-Authorization', 'Accept', 'Content-Type', 'Last-Event-ID', 'Cookie'])(
        'refuses %j',
        (name) => {
          expect(fault(file(remote({ headers: { [name]: { file: '/run/secrets/x' } } })))).toBe(
            `MCP servers file: servers[0] ("docs"): header "${name}" is set by the connection itself and cannot be configured`,
          );
        },
      );

      it.each(['Mcp-Session-Id', 'mcp-protocol-version', 'MCP-Anything'])('refuses the transport header %j', (name) => {
        expect(fault(file(remote({ headers: { [name]: { file: '/run/secrets/x' } } })))).toBe(
          `MCP servers file: servers[0] ("docs"): header "${name}" is an MCP transport header (Mcp-*), set by the transport itself`,
        );
      });

      it.each(['Bad Header', 'X-A\r\nHost', 'X-A\nHost', 'X:Y', '', 'Ä', 'X-A\u0000'])('refuses the header name %j', (name) => {
        expect(fault(file(remote({ headers: { [name]: { file: '/run/secrets/x' } } })))).toContain('is not a valid HTTP header name');
      });

      it('refuses a name given twice in two cases', () => {
        expect(fault(file(remote({ headers: { 'X-Key': { file: '/a' }, 'x-key': { file: '/b' } } })))).toContain(
          'header "x-key" is named twice (header names ignore case)',
        );
      });

      it('refuses a value written in the config text, never echoing it', () => {
        expect(fault(file(remote({ headers: { Authorization: `Bearer ${SECRET}` } })))).toBe(
          'MCP servers file: servers[0] ("docs"): headers.Authorization must be {"file": "/path"}: header values come from files, so a credential is never written in this file',
        );
        expect(fault(file(remote({ headers: { Authorization: { value: SECRET } } })))).toContain('headers.Authorization: unknown key "value"');
      });

      it.each([
        [{ file: 'run/secrets/x' }, '"file" must be an absolute path'],
        [{ file: '' }, '"file" must be an absolute path'],
        [{ file: '/run/x\nHost: evil' }, '"file" must be an absolute path'],
        [{ file: 7 }, '"file" must be an absolute path'],
        [{ file: '/x', prefix: 'Bearer\r\nHost: evil ' }, '"prefix" must be printable ASCII'],
        [{ file: '/x', prefix: 'x'.repeat(65) }, '"prefix" must be printable ASCII of at most 64'],
        [{ file: '/x', prefix: 3 }, '"prefix" must be printable ASCII'],
      ])('refuses the header source %j', (source, why) => {
        expect(fault(file(remote({ headers: { Authorization: source } })))).toContain(`headers.Authorization: ${why}`);
      });

      it('bounds the number of headers', () => {
        const headers = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`x-h${i}`, { file: '/x' }]));
        expect(fault(file(remote({ headers })))).toContain('"headers" has 17 entries; the limit is 16');
      });
    });

    it('shares the name namespace with stdio servers', () => {
      expect(fault(file(server({ name: 'docs' }), remote()))).toBe('MCP servers file: servers[1] ("docs"): duplicate name; servers[0] already uses it');
      expect(fault(file(remote({ name: 'my-docs' }), server({ name: 'my_docs' })))).toContain('both register tools as "my_docs__…"');
    });
  });
});
