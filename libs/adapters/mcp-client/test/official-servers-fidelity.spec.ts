import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenText, type ToolDefinition } from '@toolgate/contracts';
import { PassThroughRunner, testToolContext } from '@toolgate/testing';
import { MCP_CALL_RESULT_SCHEMA, McpToolSource } from '../src/index.js';

// The official servers as users install them (dev dependencies), started from node_modules.
const bin = (name: string) => fileURLToPath(new URL(`../../../../node_modules/.bin/${name}`, import.meta.url));
const validOutput = new Ajv().compile(MCP_CALL_RESULT_SCHEMA);
/** The gateway's default output limit (GatewayLimits.maxOutputBytes). */
const GATEWAY_OUTPUT_LIMIT = 1024 * 1024;
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

let root: string;
let files: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-mcp-official-'));
  files = mkdtempSync(join(tmpdir(), 'toolgate-mcp-files-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

function find(source: McpToolSource, name: string): ToolDefinition {
  const def = source.tools().find((d) => d.manifest.name === name);
  if (!def) throw new Error(`${name} is not registered; have ${source.tools().map((d) => d.manifest.name).join(', ')}`);
  return def;
}

const ctx = () => testToolContext({ principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: root });

describe('server-filesystem: structuredContent (issue 12 defect 5)', { timeout: 60_000 }, () => {
  let source: McpToolSource;
  beforeAll(async () => {
    source = await McpToolSource.start(
      { name: 'fs', command: process.execPath, args: [bin('mcp-server-filesystem'), files], env: {}, tier: 'unisolated' },
      new PassThroughRunner(),
      { workspaceRoot: root, stopGraceMs: 500, log: () => undefined },
    );
  });
  afterAll(() => source.close());

  it('read_media_file: the image reaches the agent as summaries only, in content and structuredContent', async () => {
    const picture = join(files, 'photo.png');
    writeFileSync(picture, randomBytes(300 * 1024));
    const out = (await find(source, 'fs__read_media_file').handler.invoke({ path: picture }, ctx())) as Record<string, unknown>;
    expect(validOutput(out)).toBe(true);
    const summary = { type: 'image', summary: `image (image/png, ${300 * 1024} bytes) not passed on` };
    expect(out).toEqual({ content: [summary], structuredContent: { content: [summary] } });
    // A direct MCP client gets the 400 KB of base64 twice; the agent gets a few hundred bytes.
    console.log(`read_media_file of 300 KiB: ${bytes(out)} bytes reach the agent`);
    expect(bytes(out)).toBeLessThan(500);
  });

  it('read_text_file: the text is kept once, so a file a direct client gets twice (over the output limit) fits', async () => {
    const text = `${'All work and no play. '.repeat(30_000)}`;
    const path = join(files, 'long.txt');
    writeFileSync(path, text);
    const direct = { content: [{ type: 'text', text }], structuredContent: { content: text } };
    expect(bytes(direct)).toBeGreaterThan(GATEWAY_OUTPUT_LIMIT);
    const out = (await find(source, 'fs__read_text_file').handler.invoke({ path }, ctx())) as Record<string, unknown>;
    expect(validOutput(out)).toBe(true);
    expect(out).toEqual({
      content: [{ type: 'text', summary: `same text as structuredContent.content (${text.length} characters)` }],
      structuredContent: { content: text },
    });
    console.log(`read_text_file of ${text.length} characters: a direct client gets ${bytes(direct)} bytes, the agent ${bytes(out)}`);
    expect(bytes(out)).toBeLessThan(GATEWAY_OUTPUT_LIMIT);
    expect(bytes(out)).toBeLessThan(bytes(direct) / 2 + 200);
  });

  it('declares every tool as listed, for pinning', () => {
    const read = find(source, 'fs__read_media_file').declared;
    expect(read).toMatchObject({ name: 'read_media_file', title: 'Read Media File', annotations: { readOnlyHint: true, openWorldHint: false } });
    expect(read?.['outputSchema']).toMatchObject({ type: 'object' });
  });
});

describe('server-sequential-thinking: descriptions (issue 12 defect 7)', { timeout: 60_000 }, () => {
  it('keeps its 2,781-character parameter guide whole (it was cut at 1,000)', async () => {
    const source = await McpToolSource.start(
      { name: 'think', command: process.execPath, args: [bin('mcp-server-sequential-thinking')], env: {}, tier: 'unisolated' },
      new PassThroughRunner(),
      { workspaceRoot: root, stopGraceMs: 500, log: () => undefined },
    );
    try {
      const def = find(source, 'think__sequentialthinking');
      const declared = def.declared?.['description'];
      expect(typeof declared).toBe('string');
      expect((declared as string).length).toBeGreaterThan(2000);
      expect(def.manifest.description).toBe(flattenText(declared as string, Number.MAX_SAFE_INTEGER));
      expect(def.manifest.description).not.toContain('cut by Toolgate');
    } finally {
      await source.close();
    }
  });
});
