import type { JsonSchema } from '@toolgate/contracts';
import { timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { clampsArguments, exactNumber, repairInput } from './input-repair.js';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number' },
    on: { type: 'boolean' },
    ids: { type: 'array', items: { type: 'integer' } },
    filter: { type: 'object', properties: { depth: { type: 'integer', maximum: 3 } }, additionalProperties: false },
    either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    nullable: { type: ['string', 'null'] },
  },
  required: ['query'],
  additionalProperties: false,
};

describe('repairInput', () => {
  it('does not touch values that already have an acceptable type, nor the input object', () => {
    const args = { query: 'x', limit: 3, nullable: null };
    const out = repairInput(schema, args);
    expect(out).toEqual({ args, repairs: [], withheld: [], inexact: [] });
    expect(out.args).not.toBe(args);
  });

  it('repairs nested objects and array items, with JSON pointers', () => {
    const { args, repairs } = repairInput(schema, { query: 'x', filter: { depth: '9' }, ids: ['1', 2] });
    expect(args).toEqual({ query: 'x', filter: { depth: 3 }, ids: [1, 2] });
    expect(repairs.map((r) => [r.kind, r.path])).toEqual([
      ['coerce', '/filter/depth'],
      ['clamp', '/filter/depth'],
      ['coerce', '/ids/0'],
    ]);
  });

  it('does not coerce a non-integer string for an integer, nor non-finite numbers', () => {
    expect(repairInput(schema, { query: 'x', limit: '2.5' }).repairs).toEqual([]);
    expect(repairInput(schema, { query: 'x', ratio: '1e400' }).repairs).toEqual([]);
    expect(repairInput(schema, { query: 'x', ratio: 'Infinity' }).repairs).toEqual([]);
    expect(repairInput(schema, { query: 'x', ratio: '-.5e1' }).args['ratio']).toBe(-5);
  });

  it('leaves schemas that allow several readings alone', () => {
    expect(repairInput(schema, { query: 'x', either: true }).repairs).toEqual([]);
  });

  it('uses a union type only when the value matches none of it', () => {
    expect(repairInput(schema, { query: 'x', nullable: 5 }).args['nullable']).toBe('5');
  });

  it('renames only with exactly one missing required and one unknown argument, on a closed schema', () => {
    expect(repairInput(schema, { q: 'x' }).args).toEqual({ query: 'x' });
    expect(repairInput(schema, { q: 'x', r: 'y' }).repairs).toEqual([]);
    expect(repairInput({ ...schema, additionalProperties: true }, { q: 'x' }).repairs).toEqual([]);
    expect(repairInput(schema, { query: 'x', q: 'y' }).repairs).toEqual([]);
  });

  it('never writes argument values into repair details', () => {
    const { repairs } = repairInput(schema, { secret_q: 'sk-12345', limit: '77' });
    expect(JSON.stringify(repairs)).not.toContain('sk-12345');
    expect(JSON.stringify(repairs)).not.toContain('77');
  });

  it('with clamping off, leaves numbers beyond their bounds as they are and names each bound it withheld', () => {
    const out = repairInput(schema, { query: 'x', limit: '50', filter: { depth: 9 }, ids: ['1'] }, { clamp: false });
    expect(out.args).toEqual({ query: 'x', limit: 50, filter: { depth: 9 }, ids: [1] });
    expect(out.repairs.map((r) => r.kind)).toEqual(['coerce', 'coerce']);
    expect(out.withheld).toEqual([
      { path: '/limit', bound: 'maximum', limit: 10 },
      { path: '/filter/depth', bound: 'maximum', limit: 3 },
    ]);
    expect(repairInput(schema, { query: 'x', limit: 0 }, { clamp: false }).withheld).toEqual([{ path: '/limit', bound: 'minimum', limit: 1 }]);
  });

  it('never cuts a string over maxLength or an array over maxItems', () => {
    const bounded: JsonSchema = { type: 'object', properties: { s: { type: 'string', maxLength: 2 }, a: { type: 'array', maxItems: 1 } } };
    expect(repairInput(bounded, { s: 'abc', a: [1, 2] })).toEqual({ args: { s: 'abc', a: [1, 2] }, repairs: [], withheld: [], inexact: [] });
  });
});

describe('numeric strings: converted only when a number holds them exactly', () => {
  const ratio = (value: string) => repairInput(schema, { query: 'x', ratio: value });
  const limit = (value: string) => repairInput(schema, { query: 'x', limit: value });

  it('converts every exact spelling of a value: points, exponents, a plus sign, fractions a double reads back', () => {
    for (const [text, number] of [
      ['10', 10], ['10.0', 10], ['10.', 10], ['1e1', 10], ['1E+1', 10], ['100e-1', 10], ['+10', 10], ['.5', 0.5], ['0.1', 0.1],
      ['-2.50', -2.5], ['1.5e-7', 1.5e-7], ['1e21', 1e21], ['9007199254740992', 9007199254740992], ['0.30000000000000004', 0.30000000000000004],
    ] as const) {
      expect(ratio(text), text).toMatchObject({ args: { ratio: number }, inexact: [] });
      expect(exactNumber(text), text).toBe(number);
    }
    expect(limit('1.0e1')).toMatchObject({ args: { limit: 10 }, inexact: [] });
  });

  describe('precision loss: big integers', () => {
    it('leaves an integer beyond 2^53 a string and names it, in each spelling', () => {
      for (const text of ['9007199254740993', '+9007199254740993', '-9007199254740993', '9007199254740993.0', '9.007199254740993e15', '12345678901234567890', '1' + '0'.repeat(30) + '1']) {
        const out = ratio(text);
        expect(out.args['ratio'], text).toBe(text);
        expect(out.inexact, text).toEqual(['/ratio']);
        expect(out.repairs, text).toEqual([]);
      }
    });
  });

  describe('precision loss: long fractions', () => {
    it('does not read 10.0000000000000001 as 10, so a maximum of 10 cannot pass it', () => {
      for (const text of ['10.0000000000000001', '9.99999999999999999', '0.1000000000000000000001', '1.00000000000000000000000000000000000001e1']) {
        expect(limit(text).args['limit'], text).toBe(text);
        expect(limit(text).inexact, text).toEqual(['/limit']);
        expect(ratio(text).inexact, text).toEqual(['/ratio']);
      }
    });
  });

  describe('precision loss: exponents out of range', () => {
    it('refuses what overflows to Infinity or underflows to 0 or a subnormal neighbour', () => {
      for (const text of ['1e400', '-1e400', '1e-400', '2e-324', '1e99999999999999999999']) {
        expect(ratio(text).args['ratio'], text).toBe(text);
        expect(exactNumber(text), text).toBeUndefined();
      }
    });
  });

  describe('no single reading: leading zeros, whitespace, hex, words', () => {
    it('does not convert them at all (they stay strings and fail validation as strings)', () => {
      for (const text of ['0755', '007', '-010', '00.5', ' 7', '7 ', '\t7', '7\n', '0x10', '0X1F', '0b11', '0o17', 'Infinity', '-Infinity', 'NaN', '1_000', '1,5', '٣', '', '+', '.', 'e5', '1e']) {
        const out = limit(text);
        expect(out.args['limit'], JSON.stringify(text)).toBe(text);
        expect(out.repairs, JSON.stringify(text)).toEqual([]);
      }
    });
  });

  describe('signed zero', () => {
    it('reads any zero as 0, never -0', () => {
      for (const text of ['-0', '+0', '0', '0.0', '-0.000', '-0e5', '.0']) {
        const out = ratio(text);
        expect(Object.is(out.args['ratio'], 0), text).toBe(true);
        expect(out.inexact, text).toEqual([]);
      }
    });
  });

  describe('regex backtracking (ReDoS): long runs of zeros and digits', () => {
    it('reads each hostile spelling in linear time', () => {
      const run = '0'.repeat(300_000);
      for (const text of [`1${run}1`, `1.${run}1`, `${run}`, `1${run}`, `0.${run}`, `1${run}e5`, `1.${run}e-5`, `.${run}1`, '9'.repeat(300_000)]) {
        const { value: out, ms } = timeOnThread(() => ratio(text));
        expect(ms, text.slice(0, 12)).toBeLessThan(250);
        expect(out.repairs.length + out.inexact.length, text.slice(0, 12)).toBeLessThanOrEqual(1);
      }
    });
  });

  it('names the path of each inexact string in nested objects and arrays, never its value', () => {
    const out = repairInput(schema, { query: 'x', filter: { depth: '3.00000000000000001' }, ids: ['1', '99999999999999999'] });
    expect(out.inexact).toEqual(['/filter/depth', '/ids/1']);
    expect(out.args).toEqual({ query: 'x', filter: { depth: '3.00000000000000001' }, ids: [1, '99999999999999999'] });
    expect(JSON.stringify(out.repairs)).not.toContain('9999');
  });
});

describe('clampsArguments', () => {
  it.each([
    ['low', undefined, true],
    ['medium', undefined, true],
    ['low', { clamp: false }, false],
    ['medium', { clamp: true }, true],
    ['high', undefined, false],
    ['critical', undefined, false],
    ['high', { clamp: true }, true],
    ['critical', { clamp: true }, true],
    ['high', { clamp: 'true' }, false],
    ['critical', { clamp: 1 }, false],
    ['high', {}, false],
  ] as const)('a %s-risk tool with repair %j clamps: %s', (risk, repair, clamps) => {
    expect(clampsArguments({ risk, ...(repair === undefined ? {} : { repair: repair as never }) })).toBe(clamps);
  });

  it('ignores a setting inherited from a prototype', () => {
    expect(clampsArguments({ risk: 'high', repair: Object.create({ clamp: true }) as never })).toBe(false);
    expect(clampsArguments({ risk: 'low', repair: Object.create({ clamp: false }) as never })).toBe(true);
  });
});
