import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthTimes, sendExact, startHarness, type Harness } from './e2e-harness.js';
import { mcpPostHeaders } from './mcp-relay-fixtures.js';

const ALICE = 'alice-token-mcp-deep-0123456789abcdef';
const OLGA = 'olga-token-mcp-deep-0123456789abcdef';
const LEVELS = 200_000;

/** JSON text of `expression` values no recursive encoder survives, each under the 1 MiB body cap. */
const SHAPES: Record<string, string> = {
  arrays: `${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}`,
  // The empty key keeps 200 000 levels of objects under the body cap.
  objects: `${'{"":'.repeat(LEVELS)}1${'}'.repeat(LEVELS)}`,
  mixed: `${'[{"":'.repeat(LEVELS / 2)}1${'}]'.repeat(LEVELS / 2)}`,
  // Wide but shallow: 900 KB of one-level array, past the size gate's bytes, not its depth.
  'wide, 900 KB': `[${Array.from({ length: 300_000 }, () => '11').join(',')}]`,
};

const CAPABILITIES: Record<string, object> = { elicitation: { elicitation: { form: {}, url: {} } }, sampling: { sampling: {} } };

describe('deep and large arguments over /mcp from a 2026-07-28 client that can be asked things', { timeout: 120_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['calculator'], operator: [] },
          tenants: { acme: { tools: ['*'] } },
        },
      },
    );
  }, 60_000);
  afterAll(async () => h?.stop());

  const call = (expression: string, capabilities: object) => {
    const meta = JSON.stringify({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'deep', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    });
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":${expression}},"_meta":${meta}}}`;
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    return sendExact(h.server.port, {
      method: 'POST',
      path: '/mcp',
      headers: mcpPostHeaders(h, ALICE, '2026-07-28', [
        ['mcp-method', 'tools/call'],
        ['mcp-name', 'calculator'],
      ]),
      body,
    });
  };

  // The process's first MCP call compiles what every later one reuses (the SDK's message schemas,
  // the gate pipeline's code): a one-time cost of any server's first caller, not of deep arguments.
  beforeAll(async () => {
    const answer = await call('"1 + 1"', CAPABILITIES.sampling!);
    expect(answer.body.result, JSON.stringify(answer.body).slice(0, 300)).toMatchObject({ structuredContent: { result: 2 } });
  }, 60_000);

  it('answers a deep body that is not JSON with the parse error, without parsing it, where a cut or a duplicate key would hide the fault (ADR 0076)', async () => {
    const deep = (inner: string) => `${'['.repeat(LEVELS)}${inner}${']'.repeat(LEVELS)}`;
    for (const expression of [
      `"1 + 1","x":${deep('[junk}')},"x":0`,
      `"1 + 1","x":${deep('1,')}`,
      `${deep('"\\q"')}`,
    ]) {
      let done = false;
      const pending = call(expression, CAPABILITIES.sampling!).finally(() => (done = true));
      const health = await healthTimes(h, () => done);
      const answer = await pending;
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON' } });
      expect(Math.max(...health)).toBeLessThan(100);
    }
  });

  it('refuses a body deep in more than 64 places with a JSON-RPC invalid request that says so (ADR 0076)', async () => {
    const flood = `[${Array.from({ length: 50_000 }, () => '[[[]]]').join(',')}]`;
    // The envelope is 3 levels and the expression's own 251 reach 254: the flood's array is at 255 and each of its 50,000 members a container at 256 with a deeper value.
    const deepFlood = `${'['.repeat(251)}${flood}${']'.repeat(251)}`;
    let done = false;
    const pending = call(deepFlood, CAPABILITIES.sampling!).finally(() => (done = true));
    const health = await healthTimes(h, () => done);
    const answer = await pending;
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the request nests deeper than 256 levels in more than 64 places' } });
    expect(Math.max(...health)).toBeLessThan(100);
  });

  describe('stack exhaustion by nesting, and sheer size', () => {
    describe.each(Object.keys(CAPABILITIES))('declaring %s', (capability) => {
      it.each(Object.keys(SHAPES))("%s: the size gate's refusal as a tool error, audited once, the server answering meanwhile", async (shape) => {
        let done = false;
        const pending = call(SHAPES[shape]!, CAPABILITIES[capability]!).finally(() => (done = true));
        const health = await healthTimes(h, () => done);
        const answer = await pending;
        const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        expect(answer.status, text.slice(0, 300)).toBe(200);
        expect(text).not.toMatch(/call stack|-32603/);
        const result = answer.body.result;
        expect(result.isError).toBe(true);
        const { callId, denial } = result.structuredContent;
        const code = shape.startsWith('wide') ? 'INPUT_TOO_LARGE' : 'INVALID_INPUT';
        expect(denial).toMatchObject({ gate: 'size', code });
        if (code === 'INVALID_INPUT') expect(denial.message).toBe('The arguments are nested deeper than 32 levels.');
        const audit = ((await h.call('/api/v1/audit?limit=500', { token: OLGA })).body as AuditRecord[]).filter((r) => r.callId === callId);
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({ event: 'denied', gate: 'size', code, principal: 'alice', tool: 'calculator' });
        expect(Math.max(...health)).toBeLessThan(100);
      });
    });
  });
});
