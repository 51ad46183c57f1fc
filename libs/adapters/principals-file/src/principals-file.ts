import { BuiltInRoles, PERMISSION_TYPES, type Grant, type TenantPolicy } from '@toolgate/contracts';
import { sha256, type DirectoryData, type PrincipalEntry, type RoleEntry } from './static-principal-directory.js';

/** A fault in the principals file; the message names the entry and field, never a token. */
export class PrincipalsFileError extends Error {
  override readonly name = 'PrincipalsFileError';
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const TOOL = /^(\*|[a-z][a-z0-9_]{0,127})$/;
const MIN_TOKEN_LENGTH = 16;
// A scope is matched exactly (or by `*`), so whitespace or a control character is always a typo.
const GRANT_SCOPE = /^[^\s\p{Cc}]{1,256}$/u;
const MAX_GRANTS = 64;
const BUILT_IN_ROLES: readonly string[] = Object.values(BuiltInRoles);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function onlyKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new PrincipalsFileError(`${where}: unknown field '${key}' (allowed: ${allowed.join(', ')})`);
  }
}

function stringList(value: unknown, where: string, pattern: RegExp): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new PrincipalsFileError(`${where} must be an array of strings`);
  }
  for (const item of value) {
    if (!pattern.test(item)) throw new PrincipalsFileError(`${where}: '${item.slice(0, 64)}' is not a valid name`);
  }
  return [...value];
}

function grants(value: unknown, where: string): Grant[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new PrincipalsFileError(`${where} must be an array of {"type": string, "scope": string}`);
  if (value.length > MAX_GRANTS) throw new PrincipalsFileError(`${where} holds ${value.length} grants; at most ${MAX_GRANTS} are allowed`);
  return value.map((g, i) => {
    const at = `${where}[${i}]`;
    if (!isObj(g)) throw new PrincipalsFileError(`${at} must be {"type": string, "scope": string}`);
    onlyKeys(g, ['type', 'scope'], at);
    const type = g['type'];
    const scope = g['scope'];
    if (typeof type !== 'string' || !(PERMISSION_TYPES as readonly string[]).includes(type)) {
      throw new PrincipalsFileError(`${at}.type must be one of ${PERMISSION_TYPES.join(', ')}`);
    }
    if (typeof scope !== 'string' || !GRANT_SCOPE.test(scope)) {
      throw new PrincipalsFileError(`${at}.scope must be 1 to 256 characters without spaces or control characters ('*' covers every scope)`);
    }
    return { type, scope };
  });
}

/** A role is a list of tools (holding no grants) or `{"tools": [...], "grants": [...]}` (ADR 0022). */
function role(name: string, value: unknown): RoleEntry {
  const where = `roles.${name}`;
  if (Array.isArray(value)) return { tools: stringList(value, where, TOOL), grants: [] };
  if (!isObj(value)) throw new PrincipalsFileError(`${where} must be a list of tool names or {"tools": [...], "grants": [...]}`);
  onlyKeys(value, ['tools', 'grants'], where);
  if (value['tools'] === undefined) throw new PrincipalsFileError(`${where}.tools is required (a list of tool names; [] for none)`);
  const tools = stringList(value['tools'], `${where}.tools`, TOOL);
  const held = grants(value['grants'], `${where}.grants`);
  // The built-in roles are capabilities (deciding approvals, changing settings), not permissions;
  // the gateway ignores grants on them, so a file that gives them some is refused, not misread.
  if (held.length > 0 && BUILT_IN_ROLES.includes(name)) {
    throw new PrincipalsFileError(`${where}.grants: the built-in role '${name}' holds no grants; give them to a role that holds tools`);
  }
  return { tools, grants: held };
}


/**
 * Where the JSON broke, never what is there: V8's message may quote the text around the fault,
 * which may be a token. Keeps its fixed wording ("Expected ',' or '}' after property value") and
 * the line and column, as the MCP servers file does (red team of ADR 0073: a typo in a token
 * put its first characters in the log at every save).
 */
function jsonFault(text: string, error: unknown): string {
  const match = /^([^"']*) in JSON at position (\d+)/.exec(error instanceof Error ? error.message : '');
  if (!match) return 'not valid JSON';
  const position = Number(match[2]);
  const before = text.slice(0, position);
  return `not valid JSON: ${match[1]} (line ${before.split('\n').length}, column ${position - before.lastIndexOf('\n')})`;
}
/**
 * Parses and validates the principals file (see docs/configuration.md). Every fault stops the
 * server with a message naming the entry and the field. Returns what the directory needs,
 * plus warnings (e.g. roles that grant nothing) for the operator.
 */
export function parsePrincipalsFile(text: string, options: { readonly policyOnly?: boolean } = {}): { data: DirectoryData; warnings: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PrincipalsFileError(jsonFault(text, error));
  }
  if (!isObj(raw)) throw new PrincipalsFileError('the top level must be an object with principals, roles and tenants');
  onlyKeys(raw, ['principals', 'roles', 'tenants'], 'top level');

  const roles: Record<string, RoleEntry> = {};
  if (raw['roles'] !== undefined) {
    if (!isObj(raw['roles'])) throw new PrincipalsFileError('roles must be an object mapping role names to tool lists or {tools, grants}');
    for (const [name, value] of Object.entries(raw['roles'])) {
      if (!ID.test(name)) throw new PrincipalsFileError(`roles: '${name.slice(0, 64)}' is not a valid role name`);
      roles[name] = role(name, value);
    }
  }

  const tenants: Record<string, TenantPolicy> = {};
  if (!isObj(raw['tenants'])) throw new PrincipalsFileError('tenants must be an object mapping tenant names to {tools, selfApproval}');
  for (const [name, policy] of Object.entries(raw['tenants'])) {
    const where = `tenants.${name.slice(0, 64)}`;
    if (!ID.test(name)) throw new PrincipalsFileError(`${where}: not a valid tenant name`);
    if (!isObj(policy)) throw new PrincipalsFileError(`${where} must be an object`);
    onlyKeys(policy, ['tools', 'selfApproval', 'grants'], where);
    const selfApproval = policy['selfApproval'] ?? false;
    if (typeof selfApproval !== 'boolean') throw new PrincipalsFileError(`${where}.selfApproval must be true or false`);
    tenants[name] = {
      tools: stringList(policy['tools'] ?? [], `${where}.tools`, TOOL),
      selfApproval,
      grants: grants(policy['grants'], `${where}.grants`),
    };
  }

  if (options.policyOnly) {
    // TOOLGATE_PRINCIPALS=oidc: principals are the issuer's tokens; a token here would be a second,
    // unexpiring way in that the operator may have forgotten (ADR 0074).
    if (raw['principals'] !== undefined && (!Array.isArray(raw['principals']) || raw['principals'].length > 0)) {
      throw new PrincipalsFileError('principals must be absent or empty when TOOLGATE_PRINCIPALS is oidc: principals come from the issuer\'s tokens, and this file holds only roles and tenants');
    }
    return { data: { principals: [], roles, tenants }, warnings: [] };
  }
  if (!Array.isArray(raw['principals']) || raw['principals'].length === 0) {
    throw new PrincipalsFileError('principals must be a non-empty array');
  }
  const warnings: string[] = [];
  const seenIds = new Set<string>();
  const seenTokens = new Map<string, string>();
  const principals: PrincipalEntry[] = raw['principals'].map((p: unknown, index: number) => {
    const where = `principals[${index}]`;
    if (!isObj(p)) throw new PrincipalsFileError(`${where} must be an object`);
    onlyKeys(p, ['id', 'token', 'tokenSha256', 'tenant', 'roles', 'budget'], where);
    const id = p['id'];
    if (typeof id !== 'string' || !ID.test(id)) throw new PrincipalsFileError(`${where}.id must be a name of letters, digits, '.', '_' or '-'`);
    const at = `${where} ('${id}')`;
    const tenant = p['tenant'];
    if (typeof tenant !== 'string' || !Object.hasOwn(tenants, tenant)) {
      throw new PrincipalsFileError(`${at}.tenant must name a tenant defined under tenants`);
    }
    if (seenIds.has(`${tenant}/${id}`)) throw new PrincipalsFileError(`${at}: duplicate principal id in tenant '${tenant}'`);
    seenIds.add(`${tenant}/${id}`);

    const token = p['token'];
    const tokenHash = p['tokenSha256'];
    if ((token === undefined) === (tokenHash === undefined)) {
      throw new PrincipalsFileError(`${at}: give exactly one of token or tokenSha256`);
    }
    let digest: Buffer;
    if (token !== undefined) {
      if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || token.length > 4096 || /\s/.test(token)) {
        throw new PrincipalsFileError(`${at}.token must be ${MIN_TOKEN_LENGTH} to 4096 characters without spaces`);
      }
      digest = sha256(token);
    } else {
      if (typeof tokenHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(tokenHash)) {
        throw new PrincipalsFileError(`${at}.tokenSha256 must be 64 hexadecimal characters`);
      }
      digest = Buffer.from(tokenHash, 'hex');
    }
    const other = seenTokens.get(digest.toString('hex'));
    if (other !== undefined) throw new PrincipalsFileError(`${at}: has the same token as '${other}' (each principal needs its own)`);
    seenTokens.set(digest.toString('hex'), id);

    const principalRoles = stringList(p['roles'] ?? [], `${at}.roles`, ID);
    for (const role of principalRoles) {
      if (!Object.hasOwn(roles, role) && role !== 'approver' && role !== 'operator') {
        warnings.push(`${at}: role '${role}' is not defined under roles and grants nothing`);
      }
    }

    let budget: PrincipalEntry['budget'];
    if (p['budget'] !== undefined) {
      const b = p['budget'];
      if (!isObj(b)) throw new PrincipalsFileError(`${at}.budget must be {"calls": n, "windowSeconds": n}`);
      onlyKeys(b, ['calls', 'windowSeconds'], `${at}.budget`);
      const calls = b['calls'];
      const windowSeconds = b['windowSeconds'];
      if (!Number.isInteger(calls) || (calls as number) < 0 || (calls as number) > 1e9) {
        throw new PrincipalsFileError(`${at}.budget.calls must be a whole number from 0 to 1000000000`);
      }
      if (!Number.isInteger(windowSeconds) || (windowSeconds as number) < 1 || (windowSeconds as number) > 31_536_000) {
        throw new PrincipalsFileError(`${at}.budget.windowSeconds must be a whole number of seconds from 1 to 31536000`);
      }
      budget = { calls: calls as number, windowSeconds: windowSeconds as number };
    }
    return { id, tenant, roles: principalRoles, tokenSha256: digest, ...(budget ? { budget } : {}) };
  });

  return { data: { principals, roles, tenants }, warnings };
}

/**
 * The development directory used when no principals file is configured (loopback only). Its one
 * principal holds every role, so its `worker` role holds the standing grants the documented
 * examples need (network, the workspace, exec); approval and egress still apply to every call.
 */
export function demoDirectoryData(): DirectoryData {
  return {
    principals: [{ id: 'demo', tenant: 'default', roles: ['worker', 'operator', 'approver'], tokenSha256: sha256('demo') }],
    roles: {
      worker: {
        tools: ['*'],
        grants: [
          { type: 'network', scope: '*' },
          { type: 'filesystem', scope: 'workspace' },
          { type: 'exec', scope: '*' },
        ],
      },
    },
    // The collaboration tools' permissions are the tenant's, as docs/collaboration.md configures them.
    tenants: {
      default: {
        tools: ['*'],
        selfApproval: true,
        grants: [
          { type: 'messaging', scope: '*' },
          { type: 'memory', scope: '*' },
        ],
      },
    },
  };
}
