import { describe, expect, it } from 'vitest';
import { openObjects } from './open-objects.js';

describe('openObjects', () => {
  it('names every open object by its pointer, and none of a closed or typed-map schema', () => {
    const schema = {
      type: 'object',
      properties: {
        open: { type: 'object', properties: { a: { type: 'string' } } },
        explicit: { type: 'object', additionalProperties: true },
        map: { type: 'object', additionalProperties: { type: 'string' } },
        closed: { type: 'object', properties: {}, additionalProperties: false },
        rows: { type: 'array', items: { properties: { id: { type: 'integer' } } } },
      },
      additionalProperties: false,
    };
    expect(openObjects(schema)).toEqual(['#/properties/open', '#/properties/explicit', '#/properties/rows/items']);
  });

  it('walks anyOf alternatives only where they alone define the object', () => {
    const alone = { anyOf: [{ type: 'object' }, { type: 'null' }] };
    expect(openObjects(alone)).toEqual(['#/anyOf/0']);
    const beside = { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false, anyOf: [{ type: 'object' }] };
    expect(openObjects(beside)).toEqual([]);
  });
});
