import { EgressDeniedError, ToolError, type HttpClient, type JsonObject, type ToolContext } from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer, testToolContext, type RecordedResponse, type ReplayServer } from '@toolgate/testing';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBody, httpFetchManifest, httpFetchTool } from '../src/index.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
const validInput = ajv.compile(httpFetchManifest.input);
const validOutput = ajv.compile(httpFetchManifest.output);

const bytes = (...values: number[]) => Uint8Array.from(values);
const latin1 = (text: string) => Uint8Array.from([...text].map((c) => c.charCodeAt(0)));
// 日本語 in Shift_JIS.
const SHIFT_JIS_NIHONGO = bytes(0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea);
const PNG_HEADER = bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52);

const routes: Record<string, RecordedResponse> = {
  '/utf8': {
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'set-cookie': 'session=abc', 'x-internal-token': 't0k', etag: '"v1"' },
    body: 'Grüße, 世界 ✓',
  },
  '/latin1': { status: 200, headers: { 'content-type': 'text/plain; charset=latin1' }, body: latin1('café crème') },
  '/iso': { status: 200, headers: { 'content-type': 'text/html; charset="ISO-8859-1"' }, body: latin1('<p>naïve</p>') },
  '/sjis': { status: 200, headers: { 'content-type': 'text/plain; charset=Shift_JIS' }, body: SHIFT_JIS_NIHONGO },
  '/nonsense': { status: 200, headers: { 'content-type': 'text/plain; charset=nonsense-8' }, body: 'plain ascii é' },
  '/meta': {
    status: 200,
    headers: { 'content-type': 'text/html' },
    body: Uint8Array.from([...latin1('<html><head><meta charset="windows-1252"></head><body>'), 0x93, ...latin1('quoted'), 0x94, ...latin1('</body>')]),
  },
  '/utf16': { status: 200, headers: { 'content-type': 'text/plain' }, body: bytes(0xff, 0xfe, 0x68, 0x00, 0x69, 0x00) },
  '/json': { status: 200, headers: { 'content-type': 'application/vnd.api+json' }, body: '{"ok":true}' },
  '/png': { status: 200, headers: { 'content-type': 'image/png' }, body: PNG_HEADER },
  '/untyped-binary': { status: 200, body: bytes(0x00, 0x01, 0x02, 0xff) },
  '/untyped-text': { status: 200, body: 'just text' },
  '/empty': { status: 204, body: '' },
  '/long': { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'ü'.repeat(100) },
  '/redirect': { status: 301, headers: { location: '/moved/here?x=1' }, body: 'Moved Permanently' },
  '/headers': { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' },
};

describe('http_fetch', () => {
  let replay: ReplayServer;
  let http: LoopbackHttpClient;

  beforeAll(async () => {
    replay = await startReplayServer();
    replay.respondWith((request) => routes[request.path] ?? { status: 404, body: 'not found' });
    http = new LoopbackHttpClient();
  });
  afterAll(async () => {
    await replay.close();
    await http.close();
  });

  const context = (client: HttpClient | undefined = http, signal = new AbortController().signal): ToolContext =>
    testToolContext({ signal, ...(client ? { http: client } : {}) });

  async function fetchOk(args: JsonObject): Promise<Record<string, unknown>> {
    expect(validInput(args), JSON.stringify(validInput.errors)).toBe(true);
    const output = await httpFetchTool.handler.invoke(args, context());
    expect(validOutput(output), JSON.stringify(validOutput.errors)).toBe(true);
    return output as Record<string, unknown>;
  }
  const url = (path: string) => `${replay.baseUrl}${path}`;

  describe('manifest', () => {
    it('declares a high-risk network tool that names its URL argument for the egress gate', () => {
      expect(httpFetchManifest).toMatchObject({
        name: 'http_fetch',
        risk: 'high',
        permissions: [{ type: 'network', scope: '*' }],
        tier: 'inprocess',
        timeoutMs: 30_000,
        egress: { urlArg: 'url' },
        provenance: 'first-party',
      });
    });

    it('refuses unknown headers, oversized caps, long URLs and non-URLs in the schema', () => {
      expect(validInput({ url: 'https://example.com/' })).toBe(true);
      expect(validInput({ url: 'https://example.com/', headers: { accept: 'text/html', 'accept-language': 'de' } })).toBe(true);
      expect(validInput({ url: 'https://example.com/', headers: { authorization: 'Bearer x' } })).toBe(false);
      expect(validInput({ url: 'https://example.com/', headers: { cookie: 'a=b' } })).toBe(false);
      expect(validInput({ url: 'https://example.com/', headers: { accept: 'a\r\nx-evil: 1' } })).toBe(false);
      expect(validInput({ url: 'https://example.com/', max_bytes: 5 * 1024 * 1024 })).toBe(true);
      expect(validInput({ url: 'https://example.com/', max_bytes: 5 * 1024 * 1024 + 1 })).toBe(false);
      expect(validInput({ url: 'https://example.com/', timeout_ms: 30_001 })).toBe(false);
      expect(validInput({ url: `https://example.com/${'a'.repeat(2048)}` })).toBe(false);
      expect(validInput({ url: 'not a url' })).toBe(false);
      expect(validInput({ url: 'ftp://example.com/x' })).toBe(false);
      expect(validInput({ url: 'https://example.com/', method: 'POST' })).toBe(false);
    });
  });

  describe('handler', () => {
    it('needs the network permission', async () => {
      const noHttp = { ...context(), http: undefined };
      await expect(httpFetchTool.handler.invoke({ url: url('/utf8') }, noHttp)).rejects.toMatchObject({
        name: 'ToolError',
        message: 'network permission not granted',
        reason: 'NETWORK_NOT_GRANTED',
      });
    });

    it('returns UTF-8 text with filtered headers and passes its limits to the client', async () => {
      const out = await fetchOk({ url: url('/utf8'), max_bytes: 4096, timeout_ms: 5000, headers: { accept: 'text/plain' } });
      expect(out).toMatchObject({ status: 200, kind: 'text', charset: 'utf-8', body: 'Grüße, 世界 ✓', truncated: false });
      // set-cookie and unknown headers are dropped; the useful ones pass.
      expect(out['headers']).toEqual({
        'content-type': 'text/plain; charset=utf-8',
        etag: '"v1"',
        date: expect.any(String),
      });
      expect(out['notes']).toBeUndefined();
      expect(http.sent.at(-1)).toMatchObject({ method: 'GET', maxBytes: 4096, timeoutMs: 5000, headers: { accept: 'text/plain' } });
      expect(replay.requests.at(-1)?.headers.accept).toBe('text/plain');
    });

    it('applies the default cap and time limit', async () => {
      await fetchOk({ url: url('/utf8') });
      expect(http.sent.at(-1)).toMatchObject({ maxBytes: 1024 * 1024, timeoutMs: 20_000 });
      expect(http.sent.at(-1)?.signal).toBeInstanceOf(AbortSignal);
    });

    it.each([
      ['/latin1', 'café crème', 'windows-1252'],
      ['/iso', '<p>naïve</p>', 'windows-1252'],
      ['/sjis', '日本語', 'shift_jis'],
      ['/meta', '<html><head><meta charset="windows-1252"></head><body>\u201cquoted\u201d</body>', 'windows-1252'],
      ['/utf16', 'hi', 'utf-16le'],
      ['/json', '{"ok":true}', 'utf-8'],
      ['/untyped-text', 'just text', 'utf-8'],
    ])('decodes %s by its charset', async (path, text, charset) => {
      const out = await fetchOk({ url: url(path) });
      expect(out).toMatchObject({ kind: 'text', body: text, charset });
      expect(out['notes']).toBeUndefined();
    });

    it('decodes an unknown charset as UTF-8 and says so', async () => {
      const out = await fetchOk({ url: url('/nonsense') });
      expect(out).toMatchObject({ kind: 'text', body: 'plain ascii é', charset: 'utf-8' });
      expect(out['notes']).toEqual(["unknown charset 'nonsense-8'; decoded as UTF-8"]);
    });

    it('describes binary content instead of returning it', async () => {
      const png = await fetchOk({ url: url('/png') });
      expect(png).toMatchObject({ kind: 'binary', body: '', bytes: PNG_HEADER.length, content_type: 'image/png' });
      expect(png['notes']).toEqual([`binary content (image/png), ${PNG_HEADER.length} bytes, not included`]);
      const untyped = await fetchOk({ url: url('/untyped-binary') });
      expect(untyped).toMatchObject({ kind: 'binary', body: '', bytes: 4 });
    });

    it('reports an empty body', async () => {
      expect(await fetchOk({ url: url('/empty') })).toMatchObject({ status: 204, kind: 'empty', body: '', bytes: 0 });
    });

    it('cuts the body at max_bytes without a broken character at the end', async () => {
      const out = await fetchOk({ url: url('/long'), max_bytes: 11 }); // 'ü' is 2 bytes: 5½ characters
      expect(out).toMatchObject({ truncated: true, bytes: 11, body: 'üüüüü' });
      expect(out['notes']).toEqual(['body cut at 11 bytes (max_bytes); the resource is larger']);
    });

    it('returns a redirect with its absolute location and does not follow it', async () => {
      const out = await fetchOk({ url: url('/redirect') });
      expect(out).toMatchObject({ status: 301, location: `${replay.baseUrl}/moved/here?x=1`, body: 'Moved Permanently' });
      expect((out['notes'] as string[])[0]).toMatch(/^redirect not followed/);
      expect(replay.requests.some((r) => r.path.startsWith('/moved'))).toBe(false);
    });

    it('refuses arguments the schema would refuse when called directly', async () => {
      const call = (args: JsonObject) => httpFetchTool.handler.invoke(args, context());
      await expect(call({ url: url('/utf8'), headers: { authorization: 'x' } })).rejects.toThrow(
        "header 'authorization' is not allowed; allowed headers: accept, accept-language, if-none-match, if-modified-since",
      );
      await expect(call({ url: url('/utf8'), max_bytes: 6 * 1024 * 1024 })).rejects.toThrow('max_bytes must be an integer from 1 to 5242880');
      await expect(call({ url: url('/utf8'), timeout_ms: 60_000 })).rejects.toThrow('timeout_ms must be an integer from 100 to 30000');
      await expect(call({ url: 42 })).rejects.toBeInstanceOf(ToolError);
    });

    it('passes the client refusals on unchanged', async () => {
      await expect(httpFetchTool.handler.invoke({ url: 'http://10.0.0.1/' }, context())).rejects.toBeInstanceOf(EgressDeniedError);
    });

    it('stops when the call is aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(httpFetchTool.handler.invoke({ url: url('/utf8') }, context(http, controller.signal))).rejects.toMatchObject({
        reason: 'ABORTED',
      });
    });
  });

  describe('decodeBody', () => {
    it('treats a missing content type by sniffing and keeps a cut character out of the text', () => {
      const utf8 = new TextEncoder().encode('aé');
      expect(decodeBody(utf8.subarray(0, 2), 'text/plain', true).text).toBe('a');
      expect(decodeBody(utf8.subarray(0, 2), 'text/plain', false).text).toBe('a\uFFFD');
      expect(decodeBody(new TextEncoder().encode('<?xml version="1.0" encoding="ISO-8859-1"?><a/>'), 'application/xml', false).charset).toBe(
        'windows-1252',
      );
    });
  });
});
