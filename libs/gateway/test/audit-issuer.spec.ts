import { describe, expect, it } from 'vitest';
import { harness, searchTool } from './harness.js';

describe("a call's records name the issuer of the caller's token (ADR 0074)", () => {
  it('carries issuer on the authorized, succeeded and denied records of an OIDC principal, and none for a file principal', async () => {
    const h = harness({ tools: [searchTool()] });
    const issuer = 'https://id.example.com/realms/agents';
    const oidc = { ...h.who('worker-1'), issuer };
    expect((await h.gateway.invoke(oidc, { tool: 'search', args: { query: 'a' } })).ok).toBe(true);
    expect((await h.gateway.invoke(oidc, { tool: 'search', args: {} })).ok).toBe(false);
    expect(h.audit.records.map((r) => [r.event, r.issuer])).toEqual([
      ['authorized', issuer],
      ['succeeded', issuer],
      ['denied', issuer],
    ]);
    await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'b' } });
    expect(h.audit.records.slice(3).map((r) => r.issuer)).toEqual([undefined, undefined]);
  });
});
