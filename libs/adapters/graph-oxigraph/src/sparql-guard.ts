import { ToolError } from '@toolgate/contracts';

/** The query forms the graph answers. */
export type QueryForm = 'select' | 'ask';

/** SPARQL 1.1 Update operations: none may appear in a query. */
const UPDATE_KEYWORDS = new Set(['INSERT', 'DELETE', 'LOAD', 'CLEAR', 'CREATE', 'DROP', 'COPY', 'MOVE', 'ADD', 'WITH']);

/** A SPARQL IRI reference, as the grammar's IRIREF production defines it (no controls or spaces inside). */
// eslint-disable-next-line no-control-regex -- the grammar itself excludes U+0000–U+0020
const IRIREF = /<[^<>"{}|^`\\\u0000-\u0020]*>/y;
/** Characters of keywords, prefixed names, blank node labels and numbers (`\` escapes a local-name character). */
const NAME_CHAR = /[A-Za-z0-9_\-.:%\u00B7\u00C0-\uFFFF]/;
const VARIABLE_CHAR = /[A-Za-z0-9_\u00B7\u00C0-\uFFFF]/;

/**
 * The bare keywords of a query, in order, with comments, string literals, IRIs, variables and
 * prefixed names removed, so `"SERVICE"`, `<urn:drop>`, `?insert` or `ex:load` are never mistaken
 * for the keywords they spell.
 */
export function sparqlKeywords(sparql: string): string[] {
  const keywords: string[] = [];
  let i = 0;
  while (i < sparql.length) {
    const c = sparql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < sparql.length && sparql[i] !== '\n' && sparql[i] !== '\r') i++;
    } else if (c === '"' || c === "'") {
      i = skipString(sparql, i);
    } else if (c === '<') {
      IRIREF.lastIndex = i;
      i = IRIREF.test(sparql) ? IRIREF.lastIndex : i + 1;
    } else if ((c === '?' || c === '$') && VARIABLE_CHAR.test(sparql[i + 1] ?? '')) {
      i++;
      while (i < sparql.length && VARIABLE_CHAR.test(sparql[i]!)) i++;
    } else if (NAME_CHAR.test(c) || c === '\\') {
      const start = i;
      while (i < sparql.length && (NAME_CHAR.test(sparql[i]!) || sparql[i] === '\\')) i += sparql[i] === '\\' ? 2 : 1;
      // Codepoint escapes are decoded, so a future parser that honours them outside strings
      // (SPARQL 1.1, section 19.2) cannot be handed `\u0053ERVICE` past this scan.
      const word = decodeEscapes(sparql.slice(start, i)).replace(/\.+$/, '');
      // A word with a colon is a prefixed name or blank node label; one starting with a digit is a number.
      if (word && !word.includes(':') && /^[A-Za-z]/.test(word)) keywords.push(word.toUpperCase());
    } else {
      i++;
    }
  }
  return keywords;
}

function decodeEscapes(word: string): string {
  return word.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (escape, short?: string, long?: string) => {
    const code = Number.parseInt(short ?? long ?? '', 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
  });
}

/** The index just past the string literal starting at `start` (short or long, either quote). */
function skipString(text: string, start: number): number {
  const quote = text[start]!;
  const long = text.startsWith(quote.repeat(3), start);
  let i = start + (long ? 3 : 1);
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      i += 2;
    } else if (long ? text.startsWith(quote.repeat(3), i) : c === quote) {
      // A long string may end with extra quotes that belong to its content: `"""a""""`.
      if (long) {
        i += 3;
        while (text[i] === quote) i++;
        return i;
      }
      return i + 1;
    } else if (!long && (c === '\n' || c === '\r')) {
      break;
    } else {
      i++;
    }
  }
  throw new ToolError('invalid SPARQL: a string literal is not closed', 'QUERY_INVALID');
}

/**
 * Decides, before any evaluation, whether a query may run: it must be a SELECT or ASK query
 * without SERVICE. Updates, LOAD, CONSTRUCT and DESCRIBE are refused with a message that says
 * what to do instead. The engine's own parser still checks the full grammar afterwards (and its
 * result type is checked again), so this scan only has to be right about the keywords it refuses.
 */
export function checkQuery(sparql: string, maxChars: number): QueryForm {
  if (typeof sparql !== 'string' || sparql.trim() === '') {
    throw new ToolError('the query is empty: write a SPARQL SELECT or ASK query', 'QUERY_INVALID');
  }
  if (sparql.length > maxChars) {
    throw new ToolError(`the query is ${sparql.length} characters long; at most ${maxChars} are accepted`, 'QUERY_REFUSED');
  }
  const keywords = sparqlKeywords(sparql);
  const form = keywords.find((k) => k !== 'BASE' && k !== 'PREFIX');
  if (keywords.includes('LOAD') || form === 'LOAD') {
    throw new ToolError('LOAD is refused: queries cannot fetch or import data', 'QUERY_REFUSED');
  }
  const update = keywords.find((k) => UPDATE_KEYWORDS.has(k));
  if (update) {
    throw new ToolError(`SPARQL Update (${update}) is refused: the graph only answers SELECT and ASK queries`, 'QUERY_REFUSED');
  }
  if (keywords.includes('SERVICE')) {
    throw new ToolError('SERVICE is refused: queries cannot reach other SPARQL endpoints', 'QUERY_REFUSED');
  }
  if (form === 'CONSTRUCT' || form === 'DESCRIBE') {
    throw new ToolError(
      `${form} is refused: only SELECT and ASK queries are answered; select the triples instead, e.g. SELECT ?s ?p ?o WHERE { ... }`,
      'QUERY_REFUSED',
    );
  }
  if (form === 'SELECT') return 'select';
  if (form === 'ASK') return 'ask';
  throw new ToolError(
    form ? `invalid SPARQL: expected SELECT or ASK, found '${form}'` : 'invalid SPARQL: expected SELECT or ASK',
    'QUERY_INVALID',
  );
}
