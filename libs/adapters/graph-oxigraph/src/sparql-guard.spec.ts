import { ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { checkQuery, sparqlKeywords } from './sparql-guard.js';

describe('sparqlKeywords', () => {
  it('keeps bare keywords and drops everything that only spells one', () => {
    const query = [
      'BASE <http://example.org/drop/> PREFIX insert: <urn:service:>',
      "SELECT ?load $delete WHERE { ?load insert:x 'SERVICE' , \"LOAD\" , '''a ''quoted'' CLEAR''' , \"\"\"x\"\"\"\"",
      '  . ?s <urn:CREATE> _:copy . # MOVE ADD',
      '  FILTER(?load < 3 && ?delete <= 4) }',
    ].join('\n');
    expect(sparqlKeywords(query)).toEqual(['BASE', 'PREFIX', 'SELECT', 'WHERE', 'FILTER']);
  });

  it('treats an escaped backslash or quote inside a string as part of it', () => {
    expect(sparqlKeywords('SELECT ("a\\"b" AS ?x) ("c\\\\" AS ?y) WHERE {}')).toEqual(['SELECT', 'AS', 'AS', 'WHERE']);
  });

  it('decodes codepoint escapes in bare words', () => {
    expect(sparqlKeywords('\\u0053ELECT * { \\U00000053ERVICE <urn:x> {} }')).toEqual(['SELECT', 'SERVICE']);
  });
});

describe('checkQuery', () => {
  it('names the form of a query after its prologue', () => {
    expect(checkQuery('PREFIX ex: <urn:ex:> BASE <urn:b/> select * {}', 1000)).toBe('select');
    expect(checkQuery('# leading comment\nASK {}', 1000)).toBe('ask');
  });

  it('refuses with a ToolError carrying a stable reason', () => {
    const thrown = (query: string): unknown => {
      try {
        checkQuery(query, 1000);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const update = thrown('INSERT DATA {}');
    expect(update).toBeInstanceOf(ToolError);
    expect(update).toMatchObject({ reason: 'QUERY_REFUSED' });
    expect(thrown('SELECT * { SERVICE <urn:x> {} }')).toMatchObject({ reason: 'QUERY_REFUSED', message: expect.stringMatching(/SERVICE is refused/) });
    expect(thrown('SELECT')).toBeUndefined(); // grammar errors are the engine's to report
    expect(thrown('SELEKT * {}')).toMatchObject({ reason: 'QUERY_INVALID' });
  });
});
