import { timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { boundJsonDepth, MAX_BODY_DEPTH, parseBoundedJson } from './bounded-json.js';

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

  it('cuts a value that opens past the bound to null, and keeps everything around it', () => {
    expect(boundJsonDepth('[[[1,[2]],3],4]', 2)).toEqual({ text: '[[null,3],4]', cut: true });
    expect(boundJsonDepth('{"a":{"b":{"c":1}},"d":[[0]],"e":"[[[["}', 2)).toEqual({ text: '{"a":{"b":null},"d":[null],"e":"[[[["}', cut: true });
    // Brackets inside strings, escaped quotes and escaped backslashes do not count as levels.
    expect(boundJsonDepth('[["[\\"[", "\\\\", [1]]]', 2)).toEqual({ text: '[["[\\"[", "\\\\", null]]', cut: true });
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
    // The full parse of these texts holds the thread for 30-60 ms; the scan and a 256-deep parse, a few.
    expect(ms).toBeLessThan(25);
  });

  it('keeps a text that was malformed outside a cut value malformed', () => {
    for (const text of [arrays(300).slice(0, -1), `${'['.repeat(1_000)}`, `[${arrays(300)},]`, `{"a":${arrays(300)}`]) {
      expect(() => parseBoundedJson(text)).toThrow(SyntaxError);
    }
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
