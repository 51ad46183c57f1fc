import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BASE64_SUMMARY_CHARS, MCP_CALL_RESULT_SCHEMA, MCP_TOOL_LIMITS, boundDescription, isBase64Like, toToolOutput } from '../src/mcp-tool-schema.js';

const validOutput = new Ajv().compile(MCP_CALL_RESULT_SCHEMA);
/** 3,000 bytes that are not text, as base64 (4,000 characters). */
const binary = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function output(result: Record<string, unknown>) {
  const out = toToolOutput(result);
  expect(validOutput(out)).toBe(true);
  return out as { content: Record<string, string>[]; structuredContent?: Record<string, unknown> };
}

describe('binary payloads in structuredContent', () => {
  it('summarises an image item in structuredContent as in content (server-filesystem read_media_file)', () => {
    const item = { type: 'image', data: binary, mimeType: 'image/png' };
    const out = output({ content: [item], structuredContent: { content: [item] } });
    const summary = { type: 'image', summary: 'image (image/png, 3000 bytes) not passed on' };
    expect(out).toEqual({ content: [summary], structuredContent: { content: [summary] } });
    expect(JSON.stringify(out)).not.toContain(binary.slice(0, 64));
  });

  it.each([
    ['an audio item', { type: 'audio', data: binary, mimeType: 'audio/wav' }, { type: 'audio', summary: 'audio (audio/wav, 3000 bytes) not passed on' }],
    [
      'an embedded resource with a blob',
      { type: 'resource', resource: { uri: 'file:///a.bin', mimeType: 'application/octet-stream', blob: binary } },
      { type: 'resource', summary: 'embedded resource file:///a.bin (application/octet-stream, 3000 bytes) not passed on' },
    ],
    ['resource contents with a blob', { uri: 'file:///a.bin', blob: binary }, { uri: 'file:///a.bin', blob: '[binary data not passed on by Toolgate: 3000 bytes]' }],
    ['a short blob still (a blob is always binary)', { uri: 'x', blob: 'AAAA' }, { uri: 'x', blob: '[binary data not passed on by Toolgate: 3 bytes]' }],
    ['a long base64 string under any key', { thumbnail: binary }, { thumbnail: '[binary data not passed on by Toolgate: 3000 bytes]' }],
    ['base64 with MIME line breaks', { pem: binary.replace(/(.{76})/g, '$1\r\n') }, { pem: '[binary data not passed on by Toolgate: 3000 bytes]' }],
    ['URL-safe base64', { token: binary.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') }, { token: '[binary data not passed on by Toolgate: 3000 bytes]' }],
    ['a data: URL', { src: `data:image/png;base64,${binary}` }, { src: '[data: URL (image/png, 3000 bytes) not passed on by Toolgate]' }],
    ['a data: URL with parameters, in upper case', { src: `DATA:text/plain;charset=utf-8;BASE64,${binary}` }, { src: '[data: URL (text/plain, 3000 bytes) not passed on by Toolgate]' }],
    ['an image item deep in arrays', { pages: [[{ figures: [{ type: 'image', data: binary, mimeType: 'image/jpeg' }] }]] }, { pages: [[{ figures: [{ type: 'image', summary: 'image (image/jpeg, 3000 bytes) not passed on' }] }]] }],
  ])('summarises %s', (_class, structured, expected) => {
    const out = output({ content: [], structuredContent: { value: structured } });
    expect(out.structuredContent).toEqual({ value: expected });
  });

  it.each([
    ['prose', 'word '.repeat(500)],
    ['a long hex digest list', 'deadbeef0123456789abcdef'.repeat(100)],
    ['a long number', '1234567890'.repeat(200)],
    ['a base64-looking string under the bound', binary.slice(0, BASE64_SUMMARY_CHARS - 4)],
    ['a data: URL that is not base64', `data:text/plain,${'hello%20world'.repeat(200)}`],
    ['a long path', `/srv/${'Report-2024/part1.txt/'.repeat(100)}`],
    ['a long JWT-like token with dots', `${binary.slice(0, 600)}.${binary.slice(600, 1800)}.${binary.slice(1800, 2400)}`],
  ])('keeps %s as it is', (_class, text) => {
    expect(output({ content: [], structuredContent: { text } }).structuredContent).toEqual({ text });
  });

  it('keeps an image-typed object without a string payload, and data under other types', () => {
    const structured = { a: { type: 'image', url: 'https://x/y.png' }, b: { type: 'row', data: 'plain' } };
    expect(output({ content: [], structuredContent: structured }).structuredContent).toEqual(structured);
  });

  it('summarises what nests deeper than 64 levels, and keeps a __proto__ key a key', () => {
    const deep = `${'{"d":'.repeat(5000)}"leaf"${'}'.repeat(5000)}`;
    const structured = JSON.parse(`{"__proto__": {"polluted": true}, "deep": ${deep}}`) as Record<string, unknown>;
    // A text item that could be its JSON: comparing must not overflow the stack either.
    const out = output({ content: [{ type: 'text', text: `{"deep": ${deep}}` }], structuredContent: structured });
    expect(JSON.stringify(out.structuredContent).length).toBeLessThan(1000);
    expect(JSON.stringify(out.structuredContent)).toContain('nested deeper than 64 levels: not passed on by Toolgate');
    expect(Object.hasOwn(out.structuredContent ?? {}, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('isBase64Like needs the alphabet, at most two = at the end, and mixed case and digits', () => {
    expect(isBase64Like(binary)).toBe(true);
    expect(isBase64Like(`${binary}===`)).toBe(false);
    expect(isBase64Like(`${binary.slice(0, 100)} ${binary.slice(100)}`)).toBe(false);
    expect(isBase64Like('abcdefABCDEF'.repeat(100))).toBe(false);
    expect(isBase64Like('abc123'.repeat(200))).toBe(false);
  });
});

describe('a text item that mirrors structuredContent', () => {
  const payload = 'line one\nline two\n'.repeat(1000);

  it('keeps a mirrored top-level string once (server-filesystem read_text_file) and counts it once', () => {
    const result = { content: [{ type: 'text', text: payload }], structuredContent: { content: payload } };
    const out = output(result);
    expect(out.content).toEqual([{ type: 'text', summary: `same text as structuredContent.content (${payload.length} characters)` }]);
    expect(out.structuredContent).toEqual({ content: payload });
    expect(size(out)).toBeLessThan(size(result) / 2 + 200);
  });

  it('keeps the text of all of structuredContent as JSON once, whatever its white space', () => {
    const structured = { rows: [{ id: 1, name: 'a' }], total: 1 };
    for (const text of [JSON.stringify(structured), JSON.stringify(structured, null, 2), `\n ${JSON.stringify(structured, null, '\t')}\n`]) {
      const out = output({ content: [{ type: 'text', text }], structuredContent: structured });
      expect(out.content).toEqual([{ type: 'text', summary: `same text as structuredContent (${text.length} characters)` }]);
    }
  });

  it('names a key that is not an identifier safely', () => {
    const out = output({ content: [{ type: 'text', text: 'same' }], structuredContent: { 'a\nb"]': 'same' } });
    expect(out.content[0]?.['summary']).toBe('same text as structuredContent["a\\nb\\"]"] (4 characters)');
  });

  it.each([
    ['a text that differs by one character', `${payload}!`, { content: payload }],
    ['JSON with a different value', '{"total": 2}', { total: 1 }],
    ['JSON with the keys in another order', '{"b":1,"a":2}', { a: 2, b: 1 }],
    ['a nested string only', 'inner', { outer: { text: 'inner' } }],
    ['text that is not JSON', '{ not json', { a: 1 }],
  ])('keeps %s', (_class, text, structured) => {
    const out = output({ content: [{ type: 'text', text }], structuredContent: structured });
    expect(out.content).toEqual([{ type: 'text', text }]);
  });

  it('compares with what the server sent, so a text mirroring binary data is summarised too', () => {
    const structured = { image: binary };
    const out = output({ content: [{ type: 'text', text: binary }], structuredContent: structured });
    expect(out.content).toEqual([{ type: 'text', summary: `same text as structuredContent.image (${binary.length} characters)` }]);
    expect(out.structuredContent).toEqual({ image: '[binary data not passed on by Toolgate: 3000 bytes]' });
  });

  it('leaves text alone when there is no structuredContent, and other items keep their summaries', () => {
    const out = output({ content: [{ type: 'text', text: payload }, { type: 'image', data: binary, mimeType: 'image/png' }] });
    expect(out.content).toEqual([{ type: 'text', text: payload }, { type: 'image', summary: 'image (image/png, 3000 bytes) not passed on' }]);
  });
});

describe('boundDescription', () => {
  it('keeps a description within the bound whole, flattened', () => {
    expect(boundDescription('a\n\nb', 10)).toEqual({ text: 'a b' });
  });

  it('cuts a longer one so that, with a note saying so, it fits the bound', () => {
    const text = 'x'.repeat(12_000);
    const { text: shown, cut } = boundDescription(text, MCP_TOOL_LIMITS.toolDescriptionChars);
    expect(shown.length).toBeLessThanOrEqual(MCP_TOOL_LIMITS.toolDescriptionChars);
    expect(shown).toMatch(/^x+… \[cut by Toolgate: 9948 of 12000 characters shown\]$/);
    expect(cut).toEqual({ shown: 9948, total: 12_000 });
  });

  it('never splits a surrogate pair', () => {
    const { text } = boundDescription('😀'.repeat(100), 100);
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(text.length).toBeLessThanOrEqual(100);
  });

  it('gives the note alone when the bound leaves no room for text', () => {
    expect(boundDescription('abcdef', 3).text).toBe('… [cut by Toolgate: 0 of 6 characters shown]');
  });
});
