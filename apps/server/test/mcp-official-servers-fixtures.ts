import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Harness } from './e2e-harness.js';

// Tool results are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** The checkout's node_modules, by its real path: read-only paths must name real paths (ADR 0066). */
export const MODULES = join(realpathSync(resolve(__dirname, '../../..')), 'node_modules');

/** The entry script of an official server, as `node_modules/.bin/<bin>` points at it. */
export function officialServer(pkg: 'server-everything' | 'server-filesystem' | 'server-memory' | 'server-sequential-thinking'): string {
  return join(MODULES, '@modelcontextprotocol', pkg, 'dist', 'index.js');
}

/**
 * What a bwrap server needs to read besides /usr to run node from node_modules: the modules, and
 * node's own install prefix when it is not under /usr (nvm, /opt/node).
 */
export function nodeReadOnlyPaths(): string[] {
  const node = realpathSync(process.execPath);
  const prefix = dirname(dirname(node));
  return node.startsWith('/usr/') ? [MODULES] : [MODULES, prefix];
}

/** The server's version the chart server reports, as a popular chart server did (issue 12, defect 1). */
export const CHART_VERSION = '0.8.x';

/**
 * A suite-written MCP server (newline-delimited JSON-RPC over stdio, no dependencies) that
 * reports a version that is not semver and offers two tools, like the chart server of defect 1.
 */
export const CHART_SERVER = String.raw`
import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const tools = [
  { name: 'generate_bar_chart', description: 'Draws a bar chart.', inputSchema: { type: 'object', properties: { values: { type: 'array', items: { type: 'number' } } }, required: ['values'] } },
  { name: 'generate_pie_chart', description: 'Draws a pie chart.', inputSchema: { type: 'object', properties: { values: { type: 'array', items: { type: 'number' } } }, required: ['values'] } },
];
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'chart', version: process.env.CHART_VERSION } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools } });
  else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: m.params.name + ' of ' + m.params.arguments.values.length + ' values' }] } });
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

/** A PNG of `bytes` bytes or more: a valid header and IHDR, then one ancillary chunk of noise. */
export function pngOf(bytes: number): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = Buffer.from('0000000d49484452000000010000000108060000001f15c489', 'hex');
  const noise = Buffer.alloc(bytes);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(noise.length);
  return Buffer.concat([signature, ihdr, length, Buffer.from('tEXt'), noise, Buffer.alloc(4)]);
}

/** Tokens of the suite's principals: a worker who calls, and an approver who decides. */
export const ALICE = 'alice-token-official-servers-0123456789';
export const CAROL = 'carol-token-official-servers-0123456789';

/** Invokes `tool` over REST as alice, with `extra` fields (`approvalId`, `version`) beside the arguments. */
export async function invoke(h: Harness, tool: string, args: object, extra: object = {}): Promise<any> {
  const { body } = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool, args, ...extra } });
  return body;
}

/** Asks for an approval of exactly `args` as alice and has carol approve it; returns its id. */
export async function approve(h: Harness, tool: string, args: object): Promise<string> {
  const request = await h.call('/api/v1/approvals', { method: 'POST', token: ALICE, json: { tool, args } });
  if (request.status !== 200) throw new Error(`approval request for ${tool} answered ${request.status}: ${JSON.stringify(request.body)}`);
  const id = request.body.approval.id as string;
  const decided = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: CAROL, json: { approve: true, reason: 'official-servers suite' } });
  if (decided.body?.status !== 'approved') throw new Error(`approval ${id} was not approved: ${JSON.stringify(decided.body)}`);
  return id;
}

/** Invokes `tool` as alice with a fresh approval of exactly `args` when its risk needs one. */
export async function invokeApproved(h: Harness, tool: string, args: object, needsApproval: boolean): Promise<any> {
  if (!needsApproval) return invoke(h, tool, args);
  return invoke(h, tool, args, { approvalId: await approve(h, tool, args) });
}

/** A run of base64 this long is binary data passed on, not prose (a base64 line of a PEM is 64). */
export const BASE64_RUN = /[A-Za-z0-9+/]{256,}={0,2}/;

/** The servers of the table, by the name the suite gives each in the servers file. */
export type TableServer = 'everything' | 'files' | 'memory' | 'thinking';

/** The npm package each server of the table comes from. */
export const TABLE_PACKAGES: Readonly<Record<TableServer, string>> = {
  everything: '@modelcontextprotocol/server-everything',
  files: '@modelcontextprotocol/server-filesystem',
  memory: '@modelcontextprotocol/server-memory',
  thinking: '@modelcontextprotocol/server-sequential-thinking',
};

/**
 * The arguments each tool of the table is called with, given the directory the filesystem server
 * serves (its own path on each side: the host directory directly, `/workspace` in the sandbox).
 * Listed in call order: a tool that changes something runs where the next one expects it.
 */
export const TABLE_CALLS: Readonly<Record<TableServer, Readonly<Record<string, (root: string) => Record<string, unknown>>>>> = {
  everything: {
    echo: () => ({ message: 'hello' }),
    'get-annotated-message': () => ({ messageType: 'success', includeImage: true }),
    'get-env': () => ({}),
    'get-resource-links': () => ({ count: 2 }),
    'get-resource-reference': () => ({ resourceType: 'Blob', resourceId: 2 }),
    'get-structured-content': () => ({ location: 'New York' }),
    'get-sum': () => ({ a: 2, b: 3 }),
    'get-tiny-image': () => ({}),
    'gzip-file-as-resource': () => ({ name: 'hello.gz', data: 'data:text/plain;base64,aGVsbG8gd29ybGQ=', outputType: 'resource' }),
    'toggle-simulated-logging': () => ({}),
    'toggle-subscriber-updates': () => ({}),
    'trigger-long-running-operation': () => ({ duration: 1, steps: 2 }),
    'trigger-elicitation-request': () => ({}),
    'trigger-url-elicitation': () => ({ url: 'https://example.com/sign-in' }),
    'trigger-sampling-request': () => ({ prompt: 'Say hello', maxTokens: 20 }),
    'simulate-research-query': () => ({ topic: 'gateways' }),
  },
  files: {
    read_file: (root) => ({ path: `${root}/small.txt` }),
    read_text_file: (root) => ({ path: `${root}/small.txt` }),
    read_media_file: (root) => ({ path: `${root}/picture.png` }),
    read_multiple_files: (root) => ({ paths: [`${root}/small.txt`, `${root}/edit-me.txt`] }),
    write_file: (root) => ({ path: `${root}/table-written.txt`, content: 'written' }),
    edit_file: (root) => ({ path: `${root}/edit-me.txt`, edits: [{ oldText: 'one', newText: 'two' }], dryRun: true }),
    create_directory: (root) => ({ path: `${root}/table-dir` }),
    list_directory: (root) => ({ path: `${root}/table-dir` }),
    list_directory_with_sizes: (root) => ({ path: `${root}/table-dir` }),
    directory_tree: (root) => ({ path: `${root}/table-dir` }),
    move_file: (root) => ({ source: `${root}/table-written.txt`, destination: `${root}/table-dir/moved.txt` }),
    search_files: (root) => ({ path: `${root}/table-dir`, pattern: '*.txt' }),
    get_file_info: (root) => ({ path: `${root}/table-dir` }),
    list_allowed_directories: () => ({}),
  },
  memory: {
    create_entities: () => ({ entities: [{ name: 'table', entityType: 'doc', observations: ['generated'] }, { name: 'suite', entityType: 'test', observations: [] }] }),
    create_relations: () => ({ relations: [{ from: 'suite', to: 'table', relationType: 'writes' }] }),
    add_observations: () => ({ observations: [{ entityName: 'table', contents: ['rerunnable'] }] }),
    read_graph: () => ({}),
    search_nodes: () => ({ query: 'table' }),
    open_nodes: () => ({ names: ['table'] }),
    delete_observations: () => ({ deletions: [{ entityName: 'table', observations: ['rerunnable'] }] }),
    delete_relations: () => ({ relations: [{ from: 'suite', to: 'table', relationType: 'writes' }] }),
    delete_entities: () => ({ entityNames: ['table', 'suite'] }),
  },
  thinking: {
    sequentialthinking: () => ({ thought: 'First, list the servers.', nextThoughtNeeded: false, thoughtNumber: 1, totalThoughts: 1 }),
  },
};

/**
 * Calls beside one per tool: the same tool with arguments that show a defect (issue 12), each
 * with the label its row shows.
 */
export const TABLE_EXTRA_CALLS: readonly { readonly server: TableServer; readonly tool: string; readonly label: string; readonly args: (root: string) => Record<string, unknown> }[] = [
  { server: 'files', tool: 'read_text_file', label: 'read_text_file (a 3 MB file)', args: (root) => ({ path: `${root}/big.txt` }) },
  { server: 'everything', tool: 'get-resource-links', label: 'get-resource-links (count 50, over its maximum of 10)', args: () => ({ count: 50 }) },
];

/** A size as the table shows it: bytes below 1 KiB, else KB or MB with one decimal. */
function kb(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Base64 characters in `value` that are runs long enough to be data, not prose. */
function base64Chars(value: unknown): number {
  const text = JSON.stringify(value) ?? '';
  let total = 0;
  for (const match of text.matchAll(new RegExp(BASE64_RUN.source, 'g'))) total += match[0].length;
  return total;
}

/** One content item as a cell shows it: its kind, and an example of what Toolgate said instead of binary data. */
function item(c: any): { readonly kind: string; readonly example?: string } {
  if (c.type === 'text') return typeof c.text === 'string' ? { kind: 'text' } : { kind: 'text summary', example: String(c.summary ?? '') };
  const data = c.data ?? c.resource?.blob;
  const mime = c.mimeType ?? c.resource?.mimeType;
  if (typeof data === 'string') return { kind: `${c.type}${mime ? ` ${mime}` : ''} with ${kb(data.length)} of base64` };
  if (typeof c.summary === 'string') return { kind: `${c.type} summary`, example: c.summary };
  return { kind: c.type === 'resource' ? 'resource (text)' : c.type };
}

/** The content items of a result, neighbours of one kind counted (`text ×2`), with the first summary's wording (numbers as N). */
function items(content: readonly any[]): string {
  const groups: { kind: string; count: number; example?: string }[] = [];
  for (const c of content) {
    const { kind, example } = item(c);
    const last = groups.at(-1);
    if (last?.kind === kind) last.count += 1;
    else groups.push({ kind, count: 1, ...(example === undefined ? {} : { example }) });
  }
  if (groups.length === 0) return 'no content';
  return groups
    .map((g) => `${g.kind}${g.count > 1 ? ` ×${g.count}` : ''}${g.example === undefined ? '' : ` ("${flatten(g.example.replace(/\d+/g, 'N'), 100)}")`}`)
    .join(', ');
}

function structured(value: unknown): string {
  if (value === undefined) return '';
  const data = base64Chars(value);
  return `; structuredContent${data > 0 ? ` with ${kb(data)} of base64` : ''}`;
}

/** What an MCP client talking to the server directly got: a result or the error the SDK threw. */
export function directCell(outcome: { result?: any; error?: unknown }): string {
  if (outcome.error !== undefined) return `error: ${flatten((outcome.error as Error).message, 90)}`;
  const r = outcome.result;
  const errorText = r.isError ? ` ("${flatten(r.content?.find((c: any) => c.type === 'text')?.text ?? '', 60)}")` : '';
  const size = Buffer.byteLength(JSON.stringify(r));
  const total = size > 1024 * 1024 ? ` (${kb(size)} in all)` : '';
  return `${r.isError ? 'isError: ' : ''}${items(r.content ?? [])}${errorText}${structured(r.structuredContent)}${total}`;
}

/** What an agent got from Toolgate over REST: the output, or the denial with its code. */
export function toolgateCell(answer: any, notListed?: string): string {
  if (notListed !== undefined) return `not listed: ${notListed}`;
  if (answer.ok) {
    const repaired = answer.repaired?.length ? `; repaired: ${answer.repaired.map((r: any) => `${r.kind} ${r.path}`).join(', ')}` : '';
    return `${items(answer.output.content ?? [])}${structured(answer.output.structuredContent)}${repaired}`;
  }
  const message = flatten(String(answer.denial.message), 160).replace(/\b[0-9a-f]{8}-[0-9a-f-]{27}\b/g, '<id>');
  return `refused: ${answer.denial.code} ("${message}")`;
}

/** One line, pipes escaped for a Markdown table, cut at `max` characters. */
function flatten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

export interface TableRow {
  readonly server: TableServer;
  readonly tool: string;
  readonly direct: string;
  readonly toolgate: string;
}

/** docs/mcp-official-servers.md, from the measured rows. */
export function renderTable(rows: readonly TableRow[], versions: Readonly<Record<TableServer, string>>): string {
  const lines = [
    '# The official MCP servers: a direct client and Toolgate side by side',
    '',
    '<!-- Generated by apps/server/test/mcp-official-servers.e2e.spec.ts; do not edit by hand. -->',
    '',
    'Every tool of the four official reference servers (issue 12), called once with the same',
    'arguments by an MCP client connected to the server directly (`@modelcontextprotocol/sdk` 1.32',
    'over stdio, declaring elicitation and sampling as Toolgate does, and answering them: decline',
    'and a fixed message) and by an agent through Toolgate (REST `POST /api/v1/tools/invoke`, with',
    'an approval where the risk needs one). The servers run from `node_modules` as',
    '[mcp.md](mcp.md#running-an-installed-server-at-tier-2) describes: filesystem, memory and',
    'sequential-thinking at tier `bwrap`, everything at `unisolated`. A cell names the content items',
    'and how much binary data (base64) reached the caller, never the text itself, so it does not',
    'change from run to run.',
    '',
    'Versions: ' + (Object.keys(versions) as TableServer[]).map((s) => `${TABLE_PACKAGES[s]} ${versions[s]}`).join(', ') + '.',
    '',
    'Regenerate after a change to the MCP client or an upgrade of the servers:',
    '',
    '```',
    'cd apps/server && TOOLGATE_WRITE_MCP_TABLE=1 npx vitest run test/mcp-official-servers.e2e.spec.ts',
    '```',
    '',
    'Without the variable the suite fails when this file is not what the servers and Toolgate give now.',
    '',
    '| server | tool | a direct MCP client gets | an agent gets from Toolgate |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.server} | ${r.tool.replace(/^([^ ]+)/, '`$1`')} | ${r.direct} | ${r.toolgate} |`),
    '',
    'Over MCP (`/mcp`) an agent gets the same output as `structuredContent` and a JSON text block;',
    'a client that declared elicitation or sampling is asked the server\'s questions itself',
    '([mcp.md](mcp.md#elicitation-sampling-and-progress-from-a-server)), which REST cannot do.',
    '',
  ];
  return lines.join('\n');
}
