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
 * Deepest nesting of groups (`{}`), parentheses and blank-node brackets (`[]`) accepted. The
 * engine parses and evaluates recursively on a fixed WebAssembly stack, which about 700 nested
 * groups (or 800 OPTIONALs, 2,000 parentheses) exhaust; 64 is far beyond any query an agent needs.
 */
export const MAX_QUERY_NESTING = 64;

/** What one lexical pass over a query finds: its bare keywords and how deep its brackets nest. */
interface QueryScan {
  readonly keywords: string[];
  readonly depth: number;
}

/**
 * The bare keywords of a query, in order, with comments, string literals, IRIs, variables and
 * prefixed names removed, so `"SERVICE"`, `<urn:drop>`, `?insert` or `ex:load` are never mistaken
 * for the keywords they spell.
 */
export function sparqlKeywords(sparql: string): string[] {
  return scanQuery(sparql).keywords;
}

/**
 * How deep the query's groups, parentheses and brackets nest, outside comments, string literals
 * and IRIs (so `"{{{"`, `# {{{` or the brackets of `<http://[::1]/a_(b)>` count nothing).
 * Linear in the query's length.
 */
export function sparqlNesting(sparql: string): number {
  return scanQuery(sparql).depth;
}

/** One linear pass: the keywords (as {@link sparqlKeywords}) and the deepest bracket nesting. */
function scanQuery(sparql: string): QueryScan {
  const keywords: string[] = [];
  let depth = 0;
  let deepest = 0;
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
      if (!IRIREF.test(sparql)) {
        i++;
        continue;
      }
      // Lexically, `<…>` may be an IRI or a less-than, its contents and a greater-than
      // (`FILTER(1<((1))>0)`), which only the parser can tell. Counted so that neither reading
      // nests deeper than the count: pairs within the span cancel, an opener left open stays
      // open (an operator reading's closer follows outside), a closer with no opener in the
      // span is ignored (an IRI reading closes nothing).
      let open = 0;
      for (let j = i + 1; j < IRIREF.lastIndex - 1; j++) {
        const d = sparql[j]!;
        if (d === '(' || d === '[') deepest = Math.max(deepest, depth + ++open);
        else if ((d === ')' || d === ']') && open > 0) open--;
      }
      depth += open;
      i = IRIREF.lastIndex;
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
      if (c === '{' || c === '(' || c === '[') deepest = Math.max(deepest, ++depth);
      // Unbalanced closers are the engine's syntax error to report; they never lower the count below zero.
      else if ((c === '}' || c === ')' || c === ']') && depth > 0) depth--;
      i++;
    }
  }
  return { keywords, depth: deepest };
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
 * without SERVICE, nesting at most {@link MAX_QUERY_NESTING} levels. Updates, LOAD, CONSTRUCT and
 * DESCRIBE are refused with a message that says what to do instead. The engine's own parser still checks the full grammar afterwards (and its
 * result type is checked again), so this scan only has to be right about the keywords it refuses.
 */
export function checkQuery(sparql: string, maxChars: number): QueryForm {
  if (typeof sparql !== 'string' || sparql.trim() === '') {
    throw new ToolError('the query is empty: write a SPARQL SELECT or ASK query', 'QUERY_INVALID');
  }
  if (sparql.length > maxChars) {
    throw new ToolError(`the query is ${sparql.length} characters long; at most ${maxChars} are accepted`, 'QUERY_REFUSED');
  }
  const { keywords, depth } = scanQuery(sparql);
  if (depth > MAX_QUERY_NESTING) {
    throw new ToolError(
      `the query nests deeper than ${MAX_QUERY_NESTING} groups, parentheses or brackets (${depth} levels); flatten it, e.g. join patterns in one group instead of nesting them`,
      'QUERY_REFUSED',
    );
  }
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
