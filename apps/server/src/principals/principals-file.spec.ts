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
    expect(directory.authenticate(ALICE)).toEqual({ id: 'alice', tenant: 'acme', roles: ['worker'] });
    expect(directory.authenticate('planner-token-0123456789')?.id).toBe('planner-1');
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
      expect(directory.authenticate(token)).toBeUndefined();
    }
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

  it('warns about roles that grant nothing', () => {
    const { warnings } = parse(mutate((v) => void (v.principals[0]!.roles = ['worker', 'wizard'])));
    expect(warnings).toEqual(["principals[0] ('alice'): role 'wizard' is not defined under roles and grants nothing"]);
  });
});

describe('demo directory', () => {
  it('holds one dev principal with token demo and the worker, operator and approver roles', () => {
    const directory = new StaticPrincipalDirectory(demoDirectoryData());
    expect(directory.authenticate('demo')).toEqual({ id: 'demo', tenant: 'default', roles: ['worker', 'operator', 'approver'] });
  });
});
