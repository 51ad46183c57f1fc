import { jsonObjectText } from '@toolgate/adapter-kit-store';
import { describe, expect, it } from 'vitest';
import { requireJsonObject } from './stored-json.js';

describe('requireJsonObject', () => {
  it.each([[null], [[1, 2]], ['text'], [3], [undefined]])('refuses %j as not a JSON object', (value) => {
    expect(() => requireJsonObject('args', value)).toThrow(new TypeError('args must be a JSON object'));
  });

  it('returns what a SQL store would give back: a deep copy after a JSON round trip', () => {
    const nested = { list: [1, { deep: true }] };
    const input = { nested, when: new Date(0), gone: undefined };
    const copy = requireJsonObject('args', input);
    expect(copy).toEqual({ nested: { list: [1, { deep: true }] }, when: '1970-01-01T00:00:00.000Z' });
    expect(copy['nested']).not.toBe(nested);
    expect(jsonObjectText('args', input)).toBe(JSON.stringify(copy));
  });
});
