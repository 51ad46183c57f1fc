import type { ToolManifest } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { toMcpTool, toolHints, toolTitle } from '../src/registry/tool-exports.js';
import { manifestOf } from './manifests.js';

const m = (over: Partial<ToolManifest>): ToolManifest => manifestOf({ name: 'x', description: 'd', ...over });

describe('the risk → annotations mapping (ADR 0049)', () => {
  it.each([
    ['calculator: low, no permissions', m({}), { readOnlyHint: true, destructiveHint: false, openWorldHint: false }],
    ['memory_recall: low, memory read', m({ permissions: [{ type: 'memory', scope: 'read' }] }), { readOnlyHint: true, destructiveHint: false, openWorldHint: false }],
    ['memory_store: low, memory write', m({ permissions: [{ type: 'memory', scope: 'write' }] }), { readOnlyHint: false, destructiveHint: false, openWorldHint: false }],
    ['read_file: low, workspace filesystem (not provably read-only)', m({ permissions: [{ type: 'filesystem', scope: 'workspace' }] }), { readOnlyHint: false, destructiveHint: true, openWorldHint: false }],
    ['web_search: medium, network to one host', m({ risk: 'medium', permissions: [{ type: 'network', scope: 'api.example' }] }), { readOnlyHint: false, destructiveHint: false, openWorldHint: true }],
    ['http_fetch: high, network *', m({ risk: 'high', permissions: [{ type: 'network', scope: '*' }] }), { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
    ['bash: high, exec', m({ risk: 'high', permissions: [{ type: 'exec', scope: '*' }] }), { readOnlyHint: false, destructiveHint: true, openWorldHint: false }],
    ['an upstream MCP tool, even at low risk', m({ provenance: 'mcp:files', permissions: [] }), { readOnlyHint: true, destructiveHint: false, openWorldHint: true }],
    ['critical risk without permissions is never read-only', m({ risk: 'critical' }), { readOnlyHint: false, destructiveHint: true, openWorldHint: false }],
    ['an egress spec is open-world', m({ egress: { hosts: ['a.example'] } }), { readOnlyHint: true, destructiveHint: false, openWorldHint: true }],
  ])('%s', (_name, manifest, hints) => {
    expect(toolHints(manifest)).toEqual(hints);
  });
});

describe('toolTitle', () => {
  it.each([
    ['read_file', 'Read file'],
    ['calculator', 'Calculator'],
    ['files__read_text', 'files: Read text'],
    ['a__b__c', 'a: B c'],
  ])('%s → %s', (name, title) => expect(toolTitle(name)).toBe(title));
});

describe('toMcpTool', () => {
  it('keeps the manifest name, description and both schemas as they are', () => {
    const manifest = m({ name: 'read_file', description: 'Reads.' });
    expect(toMcpTool(manifest)).toEqual({
      name: 'read_file',
      title: 'Read file',
      description: 'Reads.',
      inputSchema: manifest.input,
      outputSchema: manifest.output,
      annotations: { title: 'Read file', readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    });
  });
});
