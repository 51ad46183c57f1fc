import {
  EXECUTOR_TIERS,
  PERMISSION_TYPES,
  RISK_LEVELS,
  type JsonSchema,
  type ToolDefinition,
  type ToolManifest,
} from '@toolgate/contracts';
import { normalizeEgressHost } from '../egress/egress-host.js';
import { GatewayError } from '../denials/gateway-error.js';
import { compileSchema } from '../schema/schema-compiler.js';

/** How far the registry trusts a tool beyond what its manifest says. */
export interface ToolTrust {
  /**
   * Accept `risk: 'low'` on a tool that is not first-party. Off by default: an MCP server's
   * tools are unverified, and only an operator's explicit configuration may vouch for them.
   */
  readonly trustLowRisk?: boolean;
}

// `__` is reserved as the separator of `<server>__<tool>`: a first-party name never holds it, and
// an MCP name starts with its provenance's server, whose own name cannot hold it (see checkIdentity).
const FIRST_PARTY_NAME = /^[a-z](?:_?[a-z0-9])*_?$/;
const MCP_NAME = /^[a-z][a-z0-9_-]*__[A-Za-z0-9_-]+$/;
const MAX_NAME_LENGTH = 64;
// MCP's own cap (2025-11-25): a server's long tool name is offered under its full name, and the
// LLM exports alias it where a vendor allows only 64 (ADR 0053).
const MAX_MCP_NAME_LENGTH = 128;
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const MCP_PROVENANCE = /^mcp:[a-z0-9][a-z0-9_-]{0,63}$/;
const INTEGRITY = /^sha256:[0-9a-f]{64}$/;

/**
 * Checks a tool definition before it can be registered. Every rule here is one the gates rely
 * on (a closed input schema, a positive deadline, a known tier), so a tool that breaks one is
 * refused at start rather than misbehaving on its first call. Throws `GatewayError('INVALID')`
 * naming the tool and the rule.
 */
export function checkToolDefinition(def: ToolDefinition, trust: ToolTrust = {}): void {
  if (typeof def !== 'object' || def === null) throw new GatewayError('INVALID', 'a tool definition must be an object');
  const manifest = def.manifest;
  if (typeof manifest !== 'object' || manifest === null) throw new GatewayError('INVALID', 'a tool definition needs a manifest');
  const label = typeof manifest.name === 'string' ? `tool '${manifest.name.slice(0, MAX_MCP_NAME_LENGTH)}'` : 'a tool';
  const fail = (rule: string): never => {
    throw new GatewayError('INVALID', `${label}: ${rule}`);
  };
  if (typeof def.handler?.invoke !== 'function') fail('the handler has no invoke function');
  checkIdentity(manifest, fail);
  checkRisk(manifest, trust, fail);
  checkPermissions(manifest, fail);
  checkSchemas(manifest, fail);
  checkEgress(manifest, fail);
  checkExecution(manifest, fail);
}

type Fail = (rule: string) => never;

function checkIdentity(m: ToolManifest, fail: Fail): void {
  if (typeof m.provenance !== 'string') fail("provenance must be 'first-party' or 'mcp:<server>'");
  const mcp = m.provenance !== 'first-party';
  if (mcp && !MCP_PROVENANCE.test(m.provenance)) fail(`provenance '${m.provenance}' must be 'first-party' or 'mcp:<server>'`);
  const pattern = mcp ? MCP_NAME : FIRST_PARTY_NAME;
  const maxLength = mcp ? MAX_MCP_NAME_LENGTH : MAX_NAME_LENGTH;
  if (typeof m.name !== 'string' || m.name.length > maxLength || !pattern.test(m.name)) {
    fail(
      mcp
        ? `the name must be '<server>__<tool>' (letters, digits, '_' and '-'), at most ${MAX_MCP_NAME_LENGTH} characters`
        : `the name must be snake_case (a-z, 0-9, single '_', starting with a letter; '__' is reserved for MCP tools), at most ${MAX_NAME_LENGTH} characters`,
    );
  }
  if (mcp) checkMcpNamespace(m.name, m.provenance, fail);
  if (typeof m.version !== 'string' || !VERSION.test(m.version)) fail("the version must be semver, e.g. '1.0.0'");
  if (typeof m.description !== 'string' || m.description.trim() === '') fail('the description must be a non-empty string');
}

/**
 * An MCP tool is named `<server>__<tool>` for the server of its provenance (`-` as `_`), and the
 * server's name holds no separator, so the first `__` ends it: no server can take a name that
 * belongs to another (a server "gh__x" offering "y" would otherwise be "gh"'s tool "x__y").
 */
function checkMcpNamespace(name: string, provenance: string, fail: Fail): void {
  const server = provenance.slice('mcp:'.length).replace(/-/g, '_');
  if (server.includes('__') || server.endsWith('_')) {
    fail(`the server of provenance '${provenance}' must not hold '__' or end with '_': '__' separates a server from its tools`);
  }
  if (!name.startsWith(`${server}__`)) fail(`the name must start with '${server}__', the server of its provenance '${provenance}'`);
}

function checkRisk(m: ToolManifest, trust: ToolTrust, fail: Fail): void {
  if (!RISK_LEVELS.includes(m.risk)) fail(`risk must be one of ${RISK_LEVELS.join(', ')}`);
  if (m.provenance !== 'first-party' && m.risk === 'low' && trust.trustLowRisk !== true) {
    fail(`'${m.provenance}' tools are unverified; risk 'low' needs an operator's explicit trust configuration`);
  }
}

function checkPermissions(m: ToolManifest, fail: Fail): void {
  if (!Array.isArray(m.permissions)) fail('permissions must be an array');
  for (const p of m.permissions) {
    if (!PERMISSION_TYPES.includes(p?.type)) fail(`permission type '${String(p?.type)}' is not one of ${PERMISSION_TYPES.join(', ')}`);
    if (typeof p.scope !== 'string' || p.scope.trim() === '') fail(`permission '${p.type}' needs a non-empty scope`);
  }
}

function checkSchemas(m: ToolManifest, fail: Fail): void {
  const input = m.input;
  if (!isSchema(input) || input['type'] !== 'object') fail("the input schema must be an object schema ({ type: 'object', ... })");
  const closed = input['additionalProperties'] === false || input['unevaluatedProperties'] === false;
  if (!closed && m.ignoreUnknownArgs !== true) {
    fail('the input schema must be closed (additionalProperties: false) unless the manifest sets ignoreUnknownArgs');
  }
  if (m.ignoreUnknownArgs === true && !isSchema(input['properties'])) {
    fail('ignoreUnknownArgs needs the input schema to name its properties');
  }
  if (isSchema(input['properties']) && Array.isArray(input['required'])) {
    for (const name of input['required']) {
      if (typeof name !== 'string' || !(name in input['properties'])) fail(`the input schema requires '${String(name)}' but does not define it`);
    }
  }
  if (!isSchema(m.output)) fail('the output schema must be a JSON Schema object');
  compileOrFail(input, 'input', fail);
  compileOrFail(m.output, 'output', fail);
}

function compileOrFail(schema: JsonSchema, which: string, fail: Fail): void {
  try {
    compileSchema(schema);
  } catch (error) {
    fail(`the ${which} schema does not compile: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function checkEgress(m: ToolManifest, fail: Fail): void {
  if (m.egress === undefined) return;
  if (typeof m.egress !== 'object' || m.egress === null) fail('egress must be an object');
  for (const host of m.egress.hosts ?? []) {
    let normal: string;
    try {
      normal = normalizeEgressHost(host);
    } catch (error) {
      return fail(`egress host: ${(error as Error).message}`);
    }
    if (normal !== host) fail(`egress host '${host}' must be written in normal form '${normal}'`);
  }
  const urlArg = m.egress.urlArg;
  if (urlArg !== undefined) {
    const properties = m.input['properties'];
    const property = isSchema(properties) ? properties[urlArg] : undefined;
    if (!isSchema(property) || property['type'] !== 'string') fail(`egress.urlArg '${urlArg}' must name a string property of the input schema`);
  }
}

function checkExecution(m: ToolManifest, fail: Fail): void {
  if (!EXECUTOR_TIERS.includes(m.tier)) fail(`tier must be one of ${EXECUTOR_TIERS.join(', ')}`);
  if (typeof m.timeoutMs !== 'number' || !Number.isInteger(m.timeoutMs) || m.timeoutMs <= 0) {
    fail('timeoutMs must be a positive integer');
  }
  if (m.maxOutputBytes !== undefined && (!Number.isInteger(m.maxOutputBytes) || m.maxOutputBytes <= 0)) {
    fail('maxOutputBytes must be a positive integer');
  }
  if (m.integrity !== undefined && (typeof m.integrity !== 'string' || !INTEGRITY.test(m.integrity))) {
    fail("integrity must be 'sha256:' followed by 64 lowercase hex digits");
  }
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
