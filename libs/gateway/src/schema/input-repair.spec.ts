import type { JsonSchema } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { repairInput } from './input-repair.js';

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
    expect(out).toEqual({ args, repairs: [] });
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
});
