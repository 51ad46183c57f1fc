import { describe, expect, it } from 'vitest';
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
      shellTier: 'subprocess',
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
    ['TOOLGATE_SHELL_TIER', 'docker', /TOOLGATE_SHELL_TIER must be one of subprocess, bwrap, container/],
    ['TOOLGATE_WEB_SEARCH_PROVIDER', 'bing', /TOOLGATE_WEB_SEARCH_PROVIDER must be one of/],
    ['TOOLGATE_WEB_SEARCH_MAX_RESULTS', '11', /TOOLGATE_WEB_SEARCH_MAX_RESULTS must be a whole number from 1 to 10/],
    ['TOOLGATE_WEB_SEARCH_BASE_URL', 'ftp://x', /TOOLGATE_WEB_SEARCH_BASE_URL must use http or https/],
    ['TOOLGATE_HOST', 'a b', /TOOLGATE_HOST/],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
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

  it('parses lists and booleans', () => {
    const config = loadConfig({
      TOOLGATE_EGRESS_ENABLED: 'yes',
      TOOLGATE_ALLOWED_EGRESS_HOSTS: ' example.com, api.example.org ,,',
      TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.0/8',
    });
    expect(config.egress).toEqual({ enabled: true, allowedHosts: ['example.com', 'api.example.org'], allowAny: false, allowedCidrs: ['127.0.0.0/8'] });
  });
});

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])('%s is loopback', (h) => expect(isLoopbackHost(h)).toBe(true));
  it.each(['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.nip.io'])('%s is not', (h) => expect(isLoopbackHost(h)).toBe(false));
});
