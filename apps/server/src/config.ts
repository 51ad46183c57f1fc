import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { PROCESS_TIERS, type ProcessTier } from '@toolgate/contracts';
import { normalizeEgressHost } from '@toolgate/gateway';
import { canonicalConfiguredHost, isWildcardAddress, parseConfiguredOrigin, serializeOrigin } from './http/host-names.js';

/** A configuration fault. The message names the variable and what is wrong, never its secret value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type StoreKind = 'sqlite' | 'postgres';
export type AuditKind = 'file' | 'postgres';
export type SearchProviderName = 'duckduckgo' | 'searxng' | 'tavily';
export type PrincipalsKind = 'file' | 'oidc';

/** The JWS algorithms an OIDC directory may accept: asymmetric only (no `none`, no HMAC). */
export const OIDC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** `TOOLGATE_PRINCIPALS=oidc`: whose bearer JWTs are principals, and how their claims are read (ADR 0074). */
export interface OidcConfig {
  /** TOOLGATE_OIDC_ISSUER: https, or http on a loopback address only. */
  readonly issuer: string;
  /** TOOLGATE_OIDC_AUDIENCE: the `aud` a token must carry (this server's resource URL). */
  readonly audience: string;
  readonly idClaim: string;
  readonly tenantClaim: string;
  readonly rolesClaim: string;
  /** TOOLGATE_OIDC_ALGORITHMS: the accepted JWS algorithms, a subset of {@link OIDC_ALGORITHMS}. */
  readonly algorithms: readonly string[];
  /** TOOLGATE_OIDC_CLOCK_SKEW_SECONDS: tolerance on `exp`, `nbf` and `iat`. */
  readonly clockSkewSeconds: number;
  /** TOOLGATE_OIDC_JWKS_HOSTS: hosts besides the issuer's that its `jwks_uri` may name. */
  readonly jwksHosts: readonly string[];
  /** TOOLGATE_OIDC_SCOPES=on: a token's Toolgate scopes limit what it may ask for (ADR 0075). */
  readonly scopes: boolean;
  /** TOOLGATE_OIDC_BUDGET (`<calls>/<windowSeconds>`): the call budget of every principal of the issuer; absent, none. */
  readonly budget?: { readonly calls: number; readonly windowSeconds: number };
}

/** Everything the server reads from `TOOLGATE_*` variables, validated. */
export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly principalsFile?: string;
  /** Where principals come from (TOOLGATE_PRINCIPALS): the principals file's tokens, or an OpenID issuer's JWTs. */
  readonly principals: PrincipalsKind;
  /** Present exactly when `principals` is `oidc`. */
  readonly oidc?: OidcConfig;
  readonly store: StoreKind;
  readonly audit: AuditKind;
  readonly databaseUrl?: string;
  readonly auditHmacKey?: string;
  readonly webSearch: {
    readonly provider: SearchProviderName;
    readonly baseUrl?: string;
    readonly apiKey?: string;
    readonly maxResults: number;
  };
  readonly egress: {
    readonly enabled: boolean;
    readonly allowedHosts: readonly string[];
    readonly allowAny: boolean;
    readonly allowedCidrs: readonly string[];
  };
  /** The tier bash and git run at (`TOOLGATE_SHELL_TIER`): one of the contracts' `PROCESS_TIERS`. */
  readonly shellTier: ProcessTier;
  /**
   * Whether `TOOLGATE_SHELL_TIER` was set. Set, a tier that cannot run stops the server; unset,
   * the default `bwrap` tier is offered only where it works, and the shell tools are not offered
   * (said at start) where it does not.
   */
  readonly shellTierExplicit: boolean;
  /** The bubblewrap binary (`TOOLGATE_BWRAP_PATH`): a name looked up on PATH or an absolute path. */
  readonly bwrapPath: string;
  /** Most processes one sandboxed call may have alive at once (`TOOLGATE_SANDBOX_MAX_PROCESSES`). */
  readonly sandboxMaxProcesses: number;
  /** Most memory one sandboxed call may use, in MiB (`TOOLGATE_SANDBOX_MEMORY_MB`). */
  readonly sandboxMemoryMb: number;
  /** Image the container tier runs shell tools in. */
  readonly containerImage: string;
  readonly workspaceRoot: string;
  readonly mcpServersFile?: string;
  readonly maxBodyBytes: number;
  /** Host names the HTTP face answers besides the loopback names (TOOLGATE_ALLOWED_HOSTS), canonical. */
  readonly allowedHosts: readonly string[];
  /** Browser origins allowed to call cross-origin, answered with CORS (TOOLGATE_ALLOWED_ORIGINS), canonical. */
  readonly allowedOrigins: readonly string[];
  /** Where clients reach the server, e.g. through a reverse proxy (TOOLGATE_PUBLIC_URL); its host and origin are allowed. */
  readonly publicUrl?: string;
  /**
   * How long an MCP call is held while a human decides its approval (TOOLGATE_MCP_APPROVAL_WAIT_MS,
   * default 300000, 0 never holds, at most 3600000).
   */
  readonly mcpApprovalWaitMs: number;
  /**
   * The key that signs MCP `requestState` and 2025-era session ids (TOOLGATE_MCP_STATE_KEY, base64
   * of at least 32 bytes). Absent, each process draws a random one; processes behind one URL must share it.
   */
  readonly mcpStateKey?: Uint8Array;
  /**
   * The path variables as the operator wrote them (absent when unset), for start-up messages: the
   * resolved paths above would add the server's working directory to a relative value.
   */
  /** The `*_FILE` secrets that were set: which variable, the resolved path, and the value as set. */
  readonly secretFiles: readonly { readonly variable: string; readonly path: string; readonly asSet: string }[];
  readonly pathsAsSet: {
    readonly dataDir?: string;
    readonly workspaceRoot?: string;
    readonly principalsFile?: string;
    readonly mcpServersFile?: string;
  };
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got '${value.slice(0, 40)}')`);
  }
  return value as T;
}

/**
 * A secret given directly (`NAME`) or as a file holding it (`NAME_FILE`), so it need not sit in
 * the server's environment. Both set is a fault: which one wins would be a guess. One trailing
 * newline (as `echo` and editors write) is dropped; the value is never part of a message.
 */
function secret(env: Env, name: string, abs: (p: string) => string): string | undefined {
  const direct = text(env, name);
  const file = text(env, `${name}_FILE`);
  if (file === undefined) return direct;
  if (direct !== undefined) throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
  let value: string;
  let fd: number | undefined;
  try {
    // Without O_NONBLOCK a FIFO would hold the start until something writes to it.
    fd = openSync(abs(file), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const info = fstatSync(fd);
    if (!info.isFile() && !info.isDirectory()) {
      throw new ConfigError(`${name}_FILE cannot be read (not a regular file: a FIFO, socket or device): ${file}; point it at a file`);
    }
    if (info.size > MAX_SECRET_FILE_BYTES) throw new ConfigError(`${name}_FILE is larger than 64 KiB, which no secret is: ${file}`);
    value = readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${name}_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${file}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  value = value.replace(/\r?\n$/, '');
  if (value.trim() === '') throw new ConfigError(`${name}_FILE is empty: ${file}`);
  return value;
}

const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** Tier names that were renamed: refused with their new name, never accepted silently. */
const RENAMED_SHELL_TIERS: Readonly<Record<string, string>> = {
  subprocess:
    "TOOLGATE_SHELL_TIER=subprocess was renamed 'unisolated': bash and git run as host processes that can read and signal whatever the server's user can. Unset it for the bwrap sandbox, or set TOOLGATE_SHELL_TIER=unisolated to accept that",
};

/** The tiers `TOOLGATE_SHELL_TIER` accepts, sorted by name so the message reads the same whatever the tier order. */
const SHELL_TIERS: readonly ProcessTier[] = [...PROCESS_TIERS].sort();

function shellTier(env: Env): { tier: ProcessTier; explicit: boolean } {
  const value = text(env, 'TOOLGATE_SHELL_TIER');
  if (value !== undefined && Object.hasOwn(RENAMED_SHELL_TIERS, value)) throw new ConfigError(RENAMED_SHELL_TIERS[value]!);
  const tier = oneOf(env, 'TOOLGATE_SHELL_TIER', SHELL_TIERS, 'bwrap');
  return { tier, explicit: value !== undefined };
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = text(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false (got '${value.slice(0, 40)}')`);
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got '${value.slice(0, 40)}')`);
  }
  return Number(value);
}

function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function httpUrl(env: Env, name: string): string | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must use http or https`);
  if (url.username || url.password) throw new ConfigError(`${name} must not contain credentials`);
  return value;
}

/** TOOLGATE_ALLOWED_HOSTS: bare host names or addresses, each in one canonical spelling. */
function hostList(env: Env, name: string): string[] {
  return list(env, name).map((entry) => {
    const host = canonicalConfiguredHost(entry);
    if ('problem' in host) throw new ConfigError(`${name} entry '${entry.slice(0, 60)}' ${host.problem}`);
    if (isWildcardAddress(host.name)) throw new ConfigError(`${name} entry '${entry.slice(0, 60)}' is an any-address; list the names clients use`);
    return host.name;
  });
}

/** TOOLGATE_ALLOWED_EGRESS_HOSTS: bare host names the egress gate compares with, normalised at start. */
function egressHostList(env: Env, name: string): string[] {
  return list(env, name).map((entry) => {
    try {
      return normalizeEgressHost(entry);
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  });
}

/** TOOLGATE_ALLOWED_ORIGINS: exact origins, serialized as a browser sends them. */
function originList(env: Env, name: string): string[] {
  return list(env, name).map((entry) => {
    const origin = parseConfiguredOrigin(entry);
    if ('problem' in origin) throw new ConfigError(`${name} entry '${entry.slice(0, 60)}' ${origin.problem}`);
    return serializeOrigin(origin);
  });
}

/** TOOLGATE_PUBLIC_URL: an http(s) URL whose host is a name the guard can match. */
function publicUrl(env: Env, name: string): string | undefined {
  const value = httpUrl(env, name);
  if (value === undefined) return undefined;
  const url = new URL(value);
  if (url.search || url.hash) throw new ConfigError(`${name} must not have a query or fragment`);
  const host = canonicalConfiguredHost(url.hostname);
  if ('problem' in host || isWildcardAddress(host.name)) throw new ConfigError(`${name} must name a host clients use (a DNS name or an IP address)`);
  return url.href;
}

/** The shortest `TOOLGATE_MCP_STATE_KEY`, in decoded bytes: an HMAC-SHA256 key no shorter than its output. */
const MIN_MCP_STATE_KEY_BYTES = 32;

/** TOOLGATE_MCP_STATE_KEY: standard or URL-safe base64 of at least 32 bytes; never echoed. */
function mcpStateKey(env: Env, abs: (p: string) => string): Uint8Array | undefined {
  const value = secret(env, 'TOOLGATE_MCP_STATE_KEY', abs);
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  // Decoding is lenient about stray characters, so the alphabet and padding are checked first.
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    throw new ConfigError('TOOLGATE_MCP_STATE_KEY must be base64 (use e.g. `openssl rand -base64 32`)');
  }
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length < MIN_MCP_STATE_KEY_BYTES) {
    throw new ConfigError(`TOOLGATE_MCP_STATE_KEY must decode to at least ${MIN_MCP_STATE_KEY_BYTES} bytes (got ${key.length}; use e.g. \`openssl rand -base64 32\`)`);
  }
  return new Uint8Array(key);
}

/** A JWT claim name: what TOOLGATE_OIDC_*_CLAIM accept. */
function claimName(env: Env, name: string, fallback: string): string {
  const value = text(env, name) ?? fallback;
  if (!/^[A-Za-z_][A-Za-z0-9_:.\-/]{0,127}$/.test(value)) throw new ConfigError(`${name} must be a claim name (letters, digits and _ : . - /, at most 128)`);
  return value;
}

/** Whether an http(s) URL's host is a loopback address (the only place an http: issuer is accepted). */
function isLoopbackUrlHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** TOOLGATE_PRINCIPALS and, for `oidc`, its settings. */
function principalsSource(env: Env): { principals: PrincipalsKind; oidc?: OidcConfig } {
  const principals = oneOf(env, 'TOOLGATE_PRINCIPALS', ['file', 'oidc'] as const, 'file');
  const oidcSet = Object.keys(env).filter((name) => name.startsWith('TOOLGATE_OIDC_') && text(env, name) !== undefined);
  if (principals !== 'oidc') {
    if (oidcSet.length > 0) throw new ConfigError(`${oidcSet.sort().join(', ')} ${oidcSet.length === 1 ? 'is' : 'are'} set, but TOOLGATE_PRINCIPALS is not oidc; set TOOLGATE_PRINCIPALS=oidc or unset ${oidcSet.length === 1 ? 'it' : 'them'}`);
    return { principals };
  }
  const issuerText = text(env, 'TOOLGATE_OIDC_ISSUER');
  if (issuerText === undefined) throw new ConfigError('TOOLGATE_OIDC_ISSUER is required when TOOLGATE_PRINCIPALS is oidc (the issuer URL, e.g. https://id.example.com/realms/agents)');
  let issuer: URL;
  try {
    issuer = new URL(issuerText);
  } catch {
    throw new ConfigError('TOOLGATE_OIDC_ISSUER must be an absolute https URL');
  }
  if (issuer.username || issuer.password) throw new ConfigError('TOOLGATE_OIDC_ISSUER must not contain credentials');
  if (issuer.search || issuer.hash) throw new ConfigError('TOOLGATE_OIDC_ISSUER must not have a query or fragment');
  if (issuer.protocol === 'http:' && !isLoopbackUrlHost(issuer.hostname)) {
    throw new ConfigError('TOOLGATE_OIDC_ISSUER must be https; http is accepted only on a loopback address (127.0.0.0/8 or [::1]), for development');
  }
  if (issuer.protocol !== 'https:' && issuer.protocol !== 'http:') throw new ConfigError('TOOLGATE_OIDC_ISSUER must be an absolute https URL');
  const audience = text(env, 'TOOLGATE_OIDC_AUDIENCE');
  if (audience === undefined) throw new ConfigError("TOOLGATE_OIDC_AUDIENCE is required when TOOLGATE_PRINCIPALS is oidc (the aud tokens for this server carry, usually its URL, e.g. https://toolgate.example.com/mcp)");
  if (audience.length > 512 || /\s/.test(audience)) throw new ConfigError('TOOLGATE_OIDC_AUDIENCE must be one value without spaces, at most 512 characters');
  const algorithms = list(env, 'TOOLGATE_OIDC_ALGORITHMS');
  for (const alg of algorithms) {
    if (!(OIDC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new ConfigError(`TOOLGATE_OIDC_ALGORITHMS entry '${alg.slice(0, 20)}' is not accepted; use asymmetric algorithms from ${OIDC_ALGORITHMS.join(', ')} (never none or HS*)`);
    }
  }
  const jwksHosts = list(env, 'TOOLGATE_OIDC_JWKS_HOSTS').map((entry) => {
    const host = canonicalConfiguredHost(entry);
    if ('problem' in host) throw new ConfigError(`TOOLGATE_OIDC_JWKS_HOSTS entry '${entry.slice(0, 60)}' ${host.problem}`);
    return host.name;
  });
  const budgetText = text(env, 'TOOLGATE_OIDC_BUDGET');
  let budget: { calls: number; windowSeconds: number } | undefined;
  if (budgetText !== undefined) {
    const m = /^(\d{1,10})\/(\d{1,8})$/.exec(budgetText);
    if (!m || Number(m[1]) > 1_000_000_000 || Number(m[2]) < 1 || Number(m[2]) > 31_536_000) {
      throw new ConfigError(`TOOLGATE_OIDC_BUDGET must be <calls>/<windowSeconds>, e.g. 600/3600 (calls 0 to 1000000000, window 1 to 31536000 seconds; got '${budgetText.slice(0, 40)}')`);
    }
    budget = { calls: Number(m[1]), windowSeconds: Number(m[2]) };
  }
  // The issuer as given: it is compared with the token's iss exactly, so a trailing slash matters.
  return {
    principals,
    oidc: {
      issuer: issuerText,
      audience,
      idClaim: claimName(env, 'TOOLGATE_OIDC_ID_CLAIM', 'sub'),
      tenantClaim: claimName(env, 'TOOLGATE_OIDC_TENANT_CLAIM', 'tenant'),
      rolesClaim: claimName(env, 'TOOLGATE_OIDC_ROLES_CLAIM', 'roles'),
      algorithms: algorithms.length > 0 ? algorithms : ['RS256', 'PS256', 'ES256', 'EdDSA'],
      clockSkewSeconds: int(env, 'TOOLGATE_OIDC_CLOCK_SKEW_SECONDS', 30, 0, 300),
      jwksHosts,
      scopes: oneOf(env, 'TOOLGATE_OIDC_SCOPES', ['on', 'off'] as const, 'off') === 'on',
      ...(budget ? { budget } : {}),
    },
  };
}

/**
 * Reads and validates the configuration. Any invalid value stops the server with a message that
 * names the variable; secrets (API keys, HMAC keys, database passwords) are never echoed.
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): ServerConfig {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
  const dataDir = abs(text(env, 'TOOLGATE_DATA_DIR') ?? './.toolgate');
  for (const name of ['TOOLGATE_DATA_DIR', 'TOOLGATE_WORKSPACE_ROOT', 'TOOLGATE_PRINCIPALS_FILE', 'TOOLGATE_MCP_SERVERS_FILE']) {
    if (text(env, name)?.includes('\0')) throw new ConfigError(`${name} must not contain a NUL character`);
  }
  const store = oneOf(env, 'TOOLGATE_STORE', ['sqlite', 'postgres'] as const, 'sqlite');
  const audit = oneOf(env, 'TOOLGATE_AUDIT', ['file', 'postgres'] as const, 'file');
  const databaseUrl = secret(env, 'DATABASE_URL', abs);
  if ((store === 'postgres' || audit === 'postgres') && !databaseUrl) {
    throw new ConfigError(`DATABASE_URL is required when TOOLGATE_STORE or TOOLGATE_AUDIT is postgres`);
  }
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const hmacKey = secret(env, 'TOOLGATE_AUDIT_HMAC_KEY', abs);
  if (hmacKey !== undefined && hmacKey.length < 32) {
    throw new ConfigError('TOOLGATE_AUDIT_HMAC_KEY must be at least 32 characters (use e.g. `openssl rand -hex 32`)');
  }
  const host = text(env, 'TOOLGATE_HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) throw new ConfigError('TOOLGATE_HOST must be a host name or IP address');
  const principalsFile = text(env, 'TOOLGATE_PRINCIPALS_FILE');
  const identity = principalsSource(env);
  if (identity.principals === 'oidc' && principalsFile === undefined) {
    throw new ConfigError('TOOLGATE_PRINCIPALS=oidc needs TOOLGATE_PRINCIPALS_FILE: the roles and tenants policy tokens are checked against (its principals list stays empty)');
  }
  const mcpServersFile = text(env, 'TOOLGATE_MCP_SERVERS_FILE');
  const dataDirAsSet = text(env, 'TOOLGATE_DATA_DIR');
  const workspaceRootAsSet = text(env, 'TOOLGATE_WORKSPACE_ROOT');
  const publicUrlValue = publicUrl(env, 'TOOLGATE_PUBLIC_URL');
  const baseUrl = httpUrl(env, 'TOOLGATE_WEB_SEARCH_BASE_URL');
  const apiKey = secret(env, 'TOOLGATE_WEB_SEARCH_API_KEY', abs);
  const shell = shellTier(env);
  const stateKey = mcpStateKey(env, abs);
  const bwrapPath = text(env, 'TOOLGATE_BWRAP_PATH') ?? 'bwrap';
  if (bwrapPath.includes('\0') || (bwrapPath.includes('/') && !isAbsolute(bwrapPath))) {
    throw new ConfigError('TOOLGATE_BWRAP_PATH must be a command name or an absolute path');
  }
  return {
    host,
    port: int(env, 'TOOLGATE_PORT', 8765, 0, 65535),
    dataDir,
    ...(principalsFile ? { principalsFile: abs(principalsFile) } : {}),
    principals: identity.principals,
    ...(identity.oidc ? { oidc: identity.oidc } : {}),
    store,
    audit,
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(hmacKey ? { auditHmacKey: hmacKey } : {}),
    webSearch: {
      provider: oneOf(env, 'TOOLGATE_WEB_SEARCH_PROVIDER', ['duckduckgo', 'searxng', 'tavily'] as const, 'duckduckgo'),
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
      maxResults: int(env, 'TOOLGATE_WEB_SEARCH_MAX_RESULTS', 5, 1, 10),
    },
    egress: {
      enabled: bool(env, 'TOOLGATE_EGRESS_ENABLED', false),
      allowedHosts: egressHostList(env, 'TOOLGATE_ALLOWED_EGRESS_HOSTS'),
      allowAny: bool(env, 'TOOLGATE_EGRESS_ALLOW_ANY', false),
      allowedCidrs: list(env, 'TOOLGATE_EGRESS_ALLOWED_CIDRS'),
    },
    shellTier: shell.tier,
    shellTierExplicit: shell.explicit,
    bwrapPath,
    // Shell tools need a few dozen processes and well under 1 GiB; a bomb must stop long before pid_max.
    sandboxMaxProcesses: int(env, 'TOOLGATE_SANDBOX_MAX_PROCESSES', 256, 8, 65_536),
    sandboxMemoryMb: int(env, 'TOOLGATE_SANDBOX_MEMORY_MB', 1024, 64, 1_048_576),
    containerImage: text(env, 'TOOLGATE_CONTAINER_IMAGE') ?? 'docker.io/library/debian:bookworm-slim',
    workspaceRoot: abs(text(env, 'TOOLGATE_WORKSPACE_ROOT') ?? resolve(dataDir, 'workspaces')),
    ...(mcpServersFile ? { mcpServersFile: abs(mcpServersFile) } : {}),
    maxBodyBytes: int(env, 'TOOLGATE_MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    allowedHosts: hostList(env, 'TOOLGATE_ALLOWED_HOSTS'),
    allowedOrigins: originList(env, 'TOOLGATE_ALLOWED_ORIGINS'),
    ...(publicUrlValue ? { publicUrl: publicUrlValue } : {}),
    mcpApprovalWaitMs: int(env, 'TOOLGATE_MCP_APPROVAL_WAIT_MS', 300_000, 0, 3_600_000),
    ...(stateKey ? { mcpStateKey: stateKey } : {}),
    secretFiles: ['DATABASE_URL', 'TOOLGATE_AUDIT_HMAC_KEY', 'TOOLGATE_WEB_SEARCH_API_KEY', 'TOOLGATE_MCP_STATE_KEY'].flatMap((name) => {
      const file = text(env, `${name}_FILE`);
      return file === undefined ? [] : [{ variable: `${name}_FILE`, path: abs(file), asSet: file }];
    }),
    pathsAsSet: {
      ...(dataDirAsSet ? { dataDir: dataDirAsSet } : {}),
      ...(workspaceRootAsSet ? { workspaceRoot: workspaceRootAsSet } : {}),
      ...(principalsFile ? { principalsFile } : {}),
      ...(mcpServersFile ? { mcpServersFile } : {}),
    },
  };
}

/** Whether a listen address is loopback-only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
