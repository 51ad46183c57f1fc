import { timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { boundJsonDepth, jsonFaultAt, MAX_BODY_CUTS, MAX_BODY_DEPTH, parseBoundedJson, TooDeepJsonError } from './bounded-json.js';

/** How deep a parsed value nests (iterative, so a test of deep values cannot overflow here). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

const arrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const objects = (levels: number) => `${'{"":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('JSON bodies with their nesting bounded before the parse', () => {
  it('leaves a text within the bound as it is, strings, escapes and all', () => {
    const text = JSON.stringify({ a: [1, { b: 'x"]}[{\\', c: null }], d: '\\\\"', e: arrays(10), deep: JSON.parse(arrays(MAX_BODY_DEPTH - 1)) });
    const bounded = boundJsonDepth(text);
    expect(bounded).toEqual({ text, cut: false });
    expect(parseBoundedJson(text)).toEqual(JSON.parse(text));
  });

  it('cuts, in each container at the bound, its first deep value to null and drops what follows it there', () => {
    expect(boundJsonDepth('[[[1,[2]],3],4]', 2)).toEqual({ text: '[[null],4]', cut: true });
    expect(boundJsonDepth('[[1,[2],3,[4]],[5]]', 2)).toEqual({ text: '[[1,null],[5]]', cut: true });
    expect(boundJsonDepth('{"a":{"b":{"c":1},"x":2},"d":[[0]],"e":"[[[["}', 2)).toEqual({ text: '{"a":{"b":null},"d":[null],"e":"[[[["}', cut: true });
    // Brackets inside strings, escaped quotes and escaped backslashes do not count as levels.
    expect(boundJsonDepth('[["[\\"[", "\\\\", [1]]]', 2)).toEqual({ text: '[["[\\"[", "\\\\", null]]', cut: true });
    for (const text of ['[[[1,[2]],3],4]', '{"a":{"b":{"c":1},"x":2},"d":[[0]]}', '[[1,[2],3,[4]],[5]]']) {
      expect(() => JSON.parse(boundJsonDepth(text, 2).text)).not.toThrow();
    }
  });

  it('refuses a deep text that is not JSON, wherever its fault is, so a cut never makes it JSON', () => {
    const deep = arrays(300);
    for (const text of [
      // Malformed inside what would be cut, and a duplicate key that would drop the cut branch.
      `{"a":${'['.repeat(300)}x${']'.repeat(300)}}`,
      `{"a":${'['.repeat(255)}[x]${']'.repeat(255)},"a":0}`,
      `{"tool":"calculator","args":{"expression":"1+1"},"p":${'['.repeat(255)}[not json}${']'.repeat(255)},"p":0}`,
      `${'['.repeat(300)}[}${']'.repeat(300)}`,
      `${'['.repeat(300)}"\\q"${']'.repeat(300)}`,
      `${'['.repeat(300)}"a\u0001"${']'.repeat(300)}`,
      `${'['.repeat(300)}01${']'.repeat(300)}`,
      `${'['.repeat(300)}1.${']'.repeat(300)}`,
      `${'['.repeat(300)}[1,]${']'.repeat(300)}`,
      `${'['.repeat(300)}tru${']'.repeat(300)}`,
      // Malformed outside it.
      deep.slice(0, -1),
      '['.repeat(1_000),
      `[${deep},]`,
      `{"a":${deep}`,
      `${deep} x`,
      `\uFEFF${deep}`,
    ]) {
      expect(() => JSON.parse(text), text.slice(250, 320)).toThrow(SyntaxError);
      expect(() => boundJsonDepth(text), text.slice(250, 320)).toThrow(SyntaxError);
      expect(() => parseBoundedJson(text)).toThrow(SyntaxError);
    }
  });

  it('says where a text stops being JSON exactly when JSON.parse refuses it (seeded near-JSON texts)', () => {
    const alphabet = ['[', ']', '{', '}', ',', ':', '"a"', '"\\"', '"\\u00e9"', '"\\x"', '1', '-0.5e+3', '01', '1.', 'true', 'nul', ' ', '\n', '"'];
    let seed = 0x5eed;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    let valid = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const pieces = 1 + (next() % 12);
      for (let k = 0; k < pieces; k++) text += alphabet[next() % alphabet.length]!;
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      if (parses) valid++;
      expect(jsonFaultAt(text) === -1, JSON.stringify(text)).toBe(parses);
    }
    for (const text of ['{}', '[]', '"x"', '-0', '1e5', '0.25E-2', 'null', ' {"a" : [ 1 , {"b":[]} ] } ', '"\\u005b"', '"\\"\\/\\b\\f\\n\\r\\t"']) {
      expect(jsonFaultAt(text), text).toBe(-1);
    }
    // The generator reaches both sides.
    expect(valid).toBeGreaterThan(500);
  });

  it('costs one cut per container at the bound, however many deep values it holds', () => {
    const floods = [
      `${'['.repeat(256)}${'[],'.repeat(349_000)}[]${']'.repeat(256)}`,
      `${'['.repeat(256)}${'1,[],'.repeat(200_000)}[]${']'.repeat(256)}`,
      `${'['.repeat(255)}{${'"k":[],'.repeat(150_000)}"k":[]}${']'.repeat(255)}`,
    ];
    for (const text of floods) {
      const { value, ms } = timeOnThread(() => boundJsonDepth(text));
      expect(value.cut).toBe(true);
      expect(value.text.length).toBeLessThan(2_000);
      // Three linear passes over 1 MiB (depth, validity, cut): 8-40 ms of thread time here, cold
      // code first; JSON.parse of the same text is 16-57 ms.
      expect(ms).toBeLessThan(100);
    }
    // Malformed from its 258th character: refused there, not after the scan of the rest.
    const { ms } = timeOnThread(() => expect(() => boundJsonDepth(`${'['.repeat(256)}${'[]'.repeat(524_000)}${']'.repeat(256)}`)).toThrow(SyntaxError));
    expect(ms).toBeLessThan(10);
  });

  it(`cuts up to ${MAX_BODY_CUTS} containers at the bound and refuses a body deep in more places, before building its pieces`, () => {
    const containers = (n: number) => `${'['.repeat(MAX_BODY_DEPTH - 1)}${Array.from({ length: n }, () => '[[]]').join(',')}${']'.repeat(MAX_BODY_DEPTH - 1)}`;
    const allowed = boundJsonDepth(containers(MAX_BODY_CUTS));
    expect(allowed.cut).toBe(true);
    expect(JSON.parse(allowed.text)).toBeDefined();
    expect(() => boundJsonDepth(containers(MAX_BODY_CUTS + 1))).toThrow(TooDeepJsonError);
    expect(() => boundJsonDepth(containers(MAX_BODY_CUTS + 1))).toThrow(`the request nests deeper than ${MAX_BODY_DEPTH} levels in more than ${MAX_BODY_CUTS} places`);
    // 1 MiB of them (about 210,000): one validity scan and 65 cuts, not 420,000 pieces and a 1.47 MB parse.
    const flood = `${'['.repeat(255)}${'[[]],'.repeat(Math.floor((2 ** 20 - 514) / 5))}[[]]${']'.repeat(255)}`;
    const { ms } = timeOnThread(() => expect(() => boundJsonDepth(flood)).toThrow(TooDeepJsonError));
    expect(ms).toBeLessThan(100);
  });

  it.each([
    ['arrays', arrays(200_000)],
    ['objects', objects(200_000)],
    ['mixed', `${'[{"":'.repeat(100_000)}1${'}]'.repeat(100_000)}`],
    ['strings between the levels', `${'["]",'.repeat(100_000)}0${']'.repeat(100_000)}`],
  ])('%s 200 000 levels deep parse to the bound, in one linear scan', (_shape, deep) => {
    const text = `{"jsonrpc":"2.0","id":1,"params":{"arguments":{"expression":${deep}},"_meta":{"k":"v"}}}`;
    const { value, ms } = timeOnThread(() => parseBoundedJson(text));
    const parsed = value as { id: number; params: { arguments: unknown; _meta: unknown } };
    expect(parsed.id).toBe(1);
    expect(parsed.params._meta).toEqual({ k: 'v' });
    // Still far deeper than any call may nest (32), so the depth check behind the face refuses it.
    expect(depthOf(parsed)).toBe(MAX_BODY_DEPTH);
    expect(depthOf(parsed.params.arguments)).toBeGreaterThan(200);
    // Linear: the scans and a 256-deep parse take 5-35 ms of thread time (cold code first, CI
    // included), where a quadratic scan would take seconds. That the deep levels were never built
    // is the depth above; that no caller waits meanwhile is the e2e spec's /healthz bound.
    expect(ms).toBeLessThan(100);
  });

  it('parses what JSON.parse parses for texts within the bound, and throws where it throws', () => {
    for (const text of ['{}', '[]', '"x"', '1', 'null', ' {"a" : [ 1 , 2 ] } ', '"\\u005b"', '{"a":"\\"[[["}']) {
      expect(parseBoundedJson(text)).toEqual(JSON.parse(text));
    }
    for (const text of ['', '{', '[1,]', '{"a":1,}', '"unterminated', '{"a" 1}', 'nul']) {
      expect(() => parseBoundedJson(text)).toThrow(SyntaxError);
    }
  });
});
