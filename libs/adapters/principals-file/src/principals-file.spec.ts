import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { demoDirectoryData, parsePrincipalsFile, PrincipalsFileError } from './principals-file.js';
import { StaticPrincipalDirectory } from './static-principal-directory.js';

const ALICE = 'alice-token-0123456789';
const valid = {
  principals: [
    { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'], budget: { calls: 100, windowSeconds: 3600 } },
    { id: 'planner-1', tokenSha256: createHash('sha256').update('planner-token-0123456789').digest('hex'), tenant: 'acme', roles: ['planner'] },
    { id: 'bob', token: 'bob-token-0123456789xx', tenant: 'globex', roles: ['worker', 'approver'] },
  ],
  roles: { worker: ['*'], planner: ['send_message', 'read_messages', 'memory_write', 'memory_query'], approver: [] },
  tenants: { acme: { tools: ['*'], selfApproval: false }, globex: { tools: ['calculator'], selfApproval: true, grants: [{ type: 'network', scope: '*' }] } },
};
const parse = (value: unknown) => parsePrincipalsFile(JSON.stringify(value));
const mutate = (fn: (v: typeof valid) => void) => {
  const copy = structuredClone(valid);
  fn(copy);
  return copy;
};

describe('parsePrincipalsFile', () => {
  it('reads principals, roles and tenants; tokens by value or by SHA-256', () => {
    const { data, warnings } = parse(valid);
    const directory = new StaticPrincipalDirectory(data);
    expect(warnings).toEqual([]);
    expect(directory.principalOf(ALICE)).toEqual({ id: 'alice', tenant: 'acme', roles: ['worker'] });
    expect(directory.principalOf('planner-token-0123456789')?.id).toBe('planner-1');
    expect(directory.get('acme', 'alice')?.budget).toEqual({ calls: 100, windowSeconds: 3600 });
    expect(directory.principals('acme').map((p) => p.id)).toEqual(['alice', 'planner-1']);
    expect(directory.roleTools('planner')).toContain('send_message');
    expect(directory.roleTools('constructor')).toBeUndefined();
    expect(directory.tenant('globex')).toEqual({ tools: ['calculator'], selfApproval: true, grants: [{ type: 'network', scope: '*' }] });
    expect(directory.tenant('__proto__')).toBeUndefined();
  });

  it('refuses wrong and near-miss tokens', () => {
    const directory = new StaticPrincipalDirectory(parse(valid).data);
    for (const token of ['', 'alice', `${ALICE}x`, ALICE.slice(0, -1), ALICE.toUpperCase(), 'x'.repeat(5000)]) {
      expect(directory.principalOf(token)).toBeUndefined();
    }
  });

  it.each([
    ['an unquoted token', `{"principals": [{"id": "alice", "token":SECRETPW-9f8e7d6c5b4a3210, "tenant": "acme"}]}`],
    ['a single-quoted token', `{"principals": [{"id": "alice", "token": 'SECRETPW-9f8e7d6c5b4a3210'}]}`],
    ['a token cut off by a missing quote', `{"principals": [{"id": "alice", "token": "SECRETPW-9f8e7d6c5b4a3210}]}`],
    ['a token after a missing comma', `{"principals": [{"id": "alice" "token": "SECRETPW-9f8e7d6c5b4a3210"}]}`],
    ['a bare token', 'SECRETPW-9f8e7d6c5b4a3210'],
  ])('says where JSON with %s broke, never what is there', (_what, text) => {
    let message = '';
    try {
      parsePrincipalsFile(text);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^not valid JSON(: [^"']+ \(line \d+, column \d+\))?$/);
    expect(message).not.toMatch(/SECRET|9f8e/);
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['a duplicate token', JSON.stringify(mutate((v) => void (v.principals[2]!.token = ALICE))), /principals\[2\] \('bob'\): has the same token as 'alice'/],
    ['a duplicate id', JSON.stringify(mutate((v) => void ((v.principals as unknown[])[1] = { ...v.principals[0]!, token: 'another-token-0123456789' }))), /duplicate principal id/],
    ['an unknown tenant', JSON.stringify(mutate((v) => void (v.principals[0]!.tenant = 'initech'))), /\('alice'\)\.tenant must name a tenant/],
    ['a short token', JSON.stringify(mutate((v) => void (v.principals[0]!.token = 'short'))), /token must be 16 to 4096 characters/],
    ['both token forms', JSON.stringify(mutate((v) => void ((v.principals[1] as Record<string, unknown>)['token'] = 'planner-token-0123456789'))), /exactly one of token or tokenSha256/],
    ['a bad digest', JSON.stringify(mutate((v) => void (v.principals[1]!.tokenSha256 = 'abc'))), /tokenSha256 must be 64 hexadecimal/],
    ['an unknown field', JSON.stringify(mutate((v) => void ((v.principals[0] as Record<string, unknown>)['admin'] = true))), /unknown field 'admin'/],
    ['a negative budget', JSON.stringify(mutate((v) => void (v.principals[0]!.budget!.calls = -1))), /budget.calls must be a whole number/],
    ['a bad tool name', JSON.stringify(mutate((v) => void (v.roles.worker = ['rm -rf']))), /roles.worker: 'rm -rf' is not a valid name/],
    ['no principals', JSON.stringify(mutate((v) => void (v.principals = []))), /non-empty array/],
    ['a non-boolean selfApproval', JSON.stringify(mutate((v) => void ((v.tenants.acme as Record<string, unknown>)['selfApproval'] = 'yes'))), /selfApproval must be true or false/],
  ])('refuses %s with a message naming the fault', (_what, text, message) => {
    expect(() => parsePrincipalsFile(text)).toThrow(PrincipalsFileError);
    expect(() => parsePrincipalsFile(text)).toThrow(message);
  });

  it('never puts a token in an error message', () => {
    const text = JSON.stringify(mutate((v) => void (v.principals[2]!.token = ALICE)));
    expect(() => parsePrincipalsFile(text)).toThrow(/same token/);
    try {
      parsePrincipalsFile(text);
    } catch (error) {
      expect((error as Error).message).not.toContain(ALICE);
    }
  });

  it('reads a role as a tool list (no grants) or as {tools, grants} with standing grants', () => {
    const file = mutate((v) => {
      (v.roles as Record<string, unknown>)['runner'] = { tools: ['bash', 'git'], grants: [{ type: 'exec', scope: '*' }, { scope: 'workspace', type: 'filesystem' }] };
      (v.roles as Record<string, unknown>)['reader'] = { tools: ['read_file'] };
    });
    const directory = new StaticPrincipalDirectory(parse(file).data);
    expect(directory.roleTools('runner')).toEqual(['bash', 'git']);
    expect(directory.roleGrants('runner')).toEqual([
      { type: 'exec', scope: '*' },
      { type: 'filesystem', scope: 'workspace' },
    ]);
    expect(directory.roleGrants('reader')).toEqual([]);
    expect(directory.roleGrants('worker')).toEqual([]);
    for (const name of ['constructor', '__proto__', 'toString', 'nobody']) expect(directory.roleGrants(name)).toBeUndefined();
  });

  const withRole = (value: unknown) => JSON.stringify(mutate((v) => void ((v.roles as Record<string, unknown>)['runner'] = value)));
  const withTenantGrants = (value: unknown) => JSON.stringify(mutate((v) => void ((v.tenants.acme as Record<string, unknown>)['grants'] = value)));
  it.each([
    ['a role that is neither a list nor an object', withRole('bash'), /roles\.runner must be a list of tool names or \{"tools": \[\.\.\.\], "grants": \[\.\.\.\]\}/],
    ['a null role', withRole(null), /roles\.runner must be a list of tool names or/],
    ['a role without tools', withRole({ grants: [{ type: 'exec', scope: '*' }] }), /roles\.runner\.tools is required/],
    ['an unknown role field', withRole({ tools: [], grant: [] }), /roles\.runner: unknown field 'grant'/],
    ['a __proto__ role field', '{"principals":[{"id":"a","token":"alice-token-0123456789","tenant":"acme"}],"roles":{"runner":{"tools":[],"__proto__":{"grants":[]}}},"tenants":{"acme":{}}}', /roles\.runner: unknown field '__proto__'/],
    ['grants that are not a list', withRole({ tools: [], grants: { type: 'exec', scope: '*' } }), /roles\.runner\.grants must be an array of \{"type": string, "scope": string\}/],
    ['a grant that is not an object', withRole({ tools: [], grants: ['exec:*'] }), /roles\.runner\.grants\[0\] must be \{"type": string, "scope": string\}/],
    ['a grant with an extra field', withRole({ tools: [], grants: [{ type: 'exec', scope: '*', admin: true }] }), /roles\.runner\.grants\[0\]: unknown field 'admin'/],
    ['an unknown permission type', withRole({ tools: [], grants: [{ type: 'netwrok', scope: '*' }] }), /roles\.runner\.grants\[0\]\.type must be one of filesystem, network, exec, env, messaging, memory/],
    ['a permission type in another case', withRole({ tools: [], grants: [{ type: 'Exec', scope: '*' }] }), /grants\[0\]\.type must be one of/],
    ['an empty scope', withRole({ tools: [], grants: [{ type: 'exec', scope: '' }] }), /roles\.runner\.grants\[0\]\.scope must be 1 to 256 characters/],
    ['a scope with a space', withRole({ tools: [], grants: [{ type: 'network', scope: 'api.example.com ' }] }), /grants\[0\]\.scope must be 1 to 256 characters without spaces/],
    ['a scope with a control character', withRole({ tools: [], grants: [{ type: 'network', scope: 'a\u0000b' }] }), /grants\[0\]\.scope must be/],
    ['a scope that is too long', withRole({ tools: [], grants: [{ type: 'network', scope: 'x'.repeat(257) }] }), /grants\[0\]\.scope must be/],
    ['a scope that is not a string', withRole({ tools: [], grants: [{ type: 'network', scope: 1 }] }), /grants\[0\]\.scope must be/],
    ['too many grants', withRole({ tools: [], grants: Array.from({ length: 65 }, () => ({ type: 'exec', scope: '*' })) }), /roles\.runner\.grants holds 65 grants; at most 64/],
    ['grants on the built-in approver role', JSON.stringify(mutate((v) => void ((v.roles as Record<string, unknown>)['approver'] = { tools: [], grants: [{ type: 'exec', scope: '*' }] }))), /roles\.approver\.grants: the built-in role 'approver' holds no grants/],
    ['grants on the built-in operator role', JSON.stringify(mutate((v) => void ((v.roles as Record<string, unknown>)['operator'] = { tools: ['*'], grants: [{ type: 'network', scope: '*' }] }))), /the built-in role 'operator' holds no grants/],
    ['a bad tool in the object form', withRole({ tools: ['rm -rf'] }), /roles\.runner\.tools: 'rm -rf' is not a valid name/],
    ['a tenant grant of an unknown type', withTenantGrants([{ type: 'root', scope: '*' }]), /tenants\.acme\.grants\[0\]\.type must be one of/],
    ['a tenant grant with an extra field', withTenantGrants([{ type: 'exec', scope: '*', tenant: 'globex' }]), /tenants\.acme\.grants\[0\]: unknown field 'tenant'/],
  ])('refuses %s, naming the entry and field', (_what, text, message) => {
    expect(() => parsePrincipalsFile(text)).toThrow(PrincipalsFileError);
    expect(() => parsePrincipalsFile(text)).toThrow(message);
  });

  it('warns about roles that grant nothing', () => {
    const { warnings } = parse(mutate((v) => void (v.principals[0]!.roles = ['worker', 'wizard'])));
    expect(warnings).toEqual(["principals[0] ('alice'): role 'wizard' is not defined under roles and grants nothing"]);
  });
});

describe('demo directory', () => {
  it('holds one dev principal with token demo and the worker, operator and approver roles', () => {
    const directory = new StaticPrincipalDirectory(demoDirectoryData());
    expect(directory.principalOf('demo')).toEqual({ id: 'demo', tenant: 'default', roles: ['worker', 'operator', 'approver'] });
  });

  it('gives the demo standing grants through its worker role, enough for the documented examples (ADR 0022)', () => {
    const directory = new StaticPrincipalDirectory(demoDirectoryData());
    expect(directory.roleGrants('worker')).toEqual([
      { type: 'network', scope: '*' },
      { type: 'filesystem', scope: 'workspace' },
      { type: 'exec', scope: '*' },
    ]);
    expect(directory.tenant('default')).toEqual({
      tools: ['*'],
      selfApproval: true,
      grants: [
        { type: 'messaging', scope: '*' },
        { type: 'memory', scope: '*' },
      ],
    });
  });
});
