import { describe, expect, it } from 'vitest';
import { compileSchema } from './schema-compiler.js';

describe('compileSchema', () => {
  it('compiles once per schema object and once per schema text', () => {
    const a = { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false };
    const b = JSON.parse(JSON.stringify(a));
    expect(compileSchema(a)).toBe(compileSchema(a));
    expect(compileSchema(b)).toBe(compileSchema(a));
  });

  it('does not coerce, default or remove anything while validating', () => {
    const validate = compileSchema({ type: 'object', properties: { n: { type: 'number', default: 1 } }, additionalProperties: false });
    const args = { n: '5' };
    expect(validate(args)).toBe(false);
    expect(args).toEqual({ n: '5' });
  });

  it('refuses unknown keywords (strict) and understands formats and draft 2020-12', () => {
    expect(() => compileSchema({ type: 'string', frobnicate: 1 })).toThrow(/unknown keyword/);
    expect(compileSchema({ type: 'string', format: 'email' })('not-an-email')).toBe(false);
    expect(compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'number' }], items: false, minItems: 1 })(['x'])).toBe(false);
  });

  it('bounds the cache for sources that keep sending new schemas', () => {
    const first = { type: 'object', properties: { k0: { type: 'string' } }, required: ['k0'] };
    const original = compileSchema(JSON.parse(JSON.stringify(first)));
    for (let i = 1; i <= 1000; i++) compileSchema({ type: 'object', properties: { [`k${i}`]: { type: 'string' } }, required: [`k${i}`] });
    const again = compileSchema(JSON.parse(JSON.stringify(first)));
    expect(again).not.toBe(original);
    expect(again({ k0: 'x' })).toBe(true);
    expect(again({})).toBe(false);
  });
});
