/**
 * The "bare server" the MCP targets are measured against: the calculator tool behind the official
 * SDK's `createMcpHandler` (the same 2.4 SDK, both eras, `legacy: 'stateless'`) on node:http, with
 * no gateway — no authentication, gates, state or audit. It uses the SDK as well as Toolgate does
 * (the body parsed once and passed as `parsedBody`, a 2025-era call answered as JSON by the SDK's
 * transport, an answer sent in one write; ADR 0055), so the difference between the two is what
 * Toolgate adds, not how the SDK is mounted.
 *
 * Run as its own process: `node --import tsx bare-mcp-server.ts <port>`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { createMcpHandler, isLegacyRequest, Server, WebStandardStreamableHTTPServerTransport, type CallToolResult } from '@modelcontextprotocol/server';
import type { JsonObject, Principal, ToolContext } from '@toolgate/contracts';
import { calculatorTool } from '@toolgate/tool-calculator';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) throw new Error('usage: bare-mcp-server.ts <port>');

const nobody: Principal = { id: 'bench', tenant: 'bench', roles: [] };

const factory = () => {
  const server = new Server({ name: 'bare', version: '0.0.0' }, { capabilities: { tools: { listChanged: false } } });
  const { manifest } = calculatorTool;
  server.setRequestHandler('tools/list', () => ({
    tools: [{ name: manifest.name, description: manifest.description, inputSchema: manifest.input as never, outputSchema: manifest.output as never }],
  }));
  server.setRequestHandler('tools/call', async (request, context) => {
    const ctx: ToolContext = { signal: context.mcpReq.signal, principal: nobody, workspaceRoot: '/nonexistent', callId: String(context.mcpReq.id) };
    const output = await calculatorTool.handler.invoke((request.params.arguments ?? {}) as JsonObject, ctx);
    const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
    return server.projectCallToolResult(result, manifest.output as never);
  });
  return server;
};
const handler = createMcpHandler(factory, { legacy: 'stateless' });

/** A 2025-era request as Toolgate's face serves one that can push nothing: the SDK's transport, answering JSON. */
async function serveLegacyJson(request: Request, parsedBody: unknown): Promise<Response> {
  const server = factory();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void transport.close();
    void server.close();
  }
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

createServer((req, res) => {
  void (async () => {
    const bytes = req.method === 'POST' ? await body(req) : undefined;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    let parsedBody: unknown;
    try {
      parsedBody = bytes && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined;
    } catch {
      parsedBody = undefined;
    }
    const request = new Request(`http://127.0.0.1:${port}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(bytes ? { body: bytes } : {}) });
    const response =
      parsedBody !== undefined && (await isLegacyRequest(request, parsedBody))
        ? await serveLegacyJson(request, parsedBody)
        : await handler.fetch(request, parsedBody === undefined ? {} : { parsedBody });
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    const answer = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...out, 'content-length': String(answer.length) });
    res.end(answer);
  })().catch(() => res.destroy());
}).listen(port, '127.0.0.1');
