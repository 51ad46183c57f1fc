// The query side of the knowledge graph, in its own thread. Oxigraph evaluates SPARQL
// synchronously, so the only way to stop a runaway query is to terminate the thread running it.
// This file is plain JavaScript so the worker starts the same under node, tsx and vitest, none of
// which give a worker thread a TypeScript loader.
//
// Messages in (from replica-worker.ts), processed in order:
//   { op: 'reset', nquads }                every graph replaced by these quads
//   { op: 'reset', path }                  every graph replaced by the complete lines of this file
//   { op: 'add', nquads }                  quads added (each to its own named graph's store)
//   { op: 'replace-graph', graph, nquads } one graph's store replaced by these quads
//   { op: 'query', id, graph, sparql, maxRows, maxBytes }
// Messages out: { id, ok: true, answer } | { id, ok: false, reason, message, retire? }.
import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { Store, namedNode, parse } from 'oxigraph';

/**
 * Queries yield the CPU to the gateway's event loop: on Linux each thread has its own nice value,
 * so this thread (not the process) is lowered. Elsewhere /proc/thread-self is absent and the
 * thread keeps the process's priority; the main thread is never blocked by a query either way.
 */
function lowerThreadPriority() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // No per-thread priority here: only scheduling under CPU contention is affected.
  }
}
lowerThreadPriority();

/**
 * One store per named graph (per tenant): a query runs against a store holding only its own
 * tenant's quads, so no query form can reach another tenant's data, whatever the dataset options.
 * @type {Map<string, Store>}
 */
const stores = new Map();

/** Set once the engine has trapped; no query runs on it after that. */
let engineBroken = false;

function addQuads(nquads) {
  if (!nquads) return;
  for (const quad of parse(nquads, { format: 'application/n-quads' })) {
    let store = stores.get(quad.graph.value);
    if (!store) {
      store = new Store();
      stores.set(quad.graph.value, store);
    }
    store.add(quad);
  }
}

/**
 * The file's text up to its last newline. An append still being written may show part of its
 * line; that write has not resolved yet, and its quads follow as an 'add' message.
 */
function completeLines(text) {
  return text.slice(0, text.lastIndexOf('\n') + 1);
}

/** The plain value of a SPARQL JSON results term, as the port describes row values. */
function termValue(term) {
  if (term.type === 'bnode') return `_:${term.value}`;
  if (term.type === 'triple') return JSON.stringify(term.value);
  return String(term.value);
}

function firstLine(text) {
  const line = String(text).split('\n', 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

function runQuery({ id, graph, sparql, maxRows, maxBytes }) {
  const graphNode = namedNode(graph);
  let json;
  try {
    // The dataset is the tenant's graph: as the default graph, and as the only named graph.
    // These options override any FROM / FROM NAMED clause in the query text.
    json = (stores.get(graph) ?? new Store()).query(sparql, {
      default_graph: graphNode,
      named_graphs: [graphNode],
      results_format: 'application/sparql-results+json',
    });
  } catch (error) {
    const message = firstLine(error instanceof Error ? error.message : error);
    // Oxigraph reports syntax errors as "error at <line>:<column>: …"; anything else failed while running.
    if (/^error at \d+:\d+/.test(message)) return { id, ok: false, reason: 'QUERY_INVALID', message: `invalid SPARQL: ${message}` };
    if (error instanceof globalThis.WebAssembly.RuntimeError || error instanceof RangeError) {
      // The engine ran out of stack (or trapped otherwise): its memory can no longer be trusted,
      // and every later query here would fail too, so the answer asks for this thread to be
      // retired (the next query gets a fresh one), and the thread stops taking queries itself.
      engineBroken = true;
      return { id, ok: false, retire: true, reason: 'QUERY_FAILED', message: 'the query is too complex for the engine (nested too deeply, or too long a chain of operators); simplify it' };
    }
    // The engine's own words stay here: they describe its internals, not the caller's query.
    return { id, ok: false, reason: 'QUERY_FAILED', message: 'the query failed while it was being evaluated' };
  }
  if (typeof json !== 'string') {
    return { id, ok: false, reason: 'QUERY_REFUSED', message: 'only SELECT and ASK queries are answered' };
  }
  const parsed = JSON.parse(json);
  if (typeof parsed.boolean === 'boolean') return { id, ok: true, answer: { kind: 'boolean', value: parsed.boolean } };
  if (!parsed.results || !Array.isArray(parsed.results.bindings)) {
    return { id, ok: false, reason: 'QUERY_REFUSED', message: 'only SELECT and ASK queries are answered' };
  }
  const variables = Array.isArray(parsed.head?.vars) ? parsed.head.vars.map(String) : [];
  const rows = [];
  let bytes = 2; // the enclosing brackets of the rows array
  let truncated = false;
  for (const binding of parsed.results.bindings) {
    if (rows.length >= maxRows) {
      truncated = true;
      break;
    }
    const row = {};
    for (const variable of variables) {
      const term = binding[variable];
      if (term) row[variable] = termValue(term);
    }
    const size = Buffer.byteLength(JSON.stringify(row), 'utf8') + (rows.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      truncated = true;
      break;
    }
    bytes += size;
    rows.push(row);
  }
  return { id, ok: true, answer: { kind: 'bindings', variables, rows, truncated } };
}

parentPort.on('message', (message) => {
  switch (message.op) {
    case 'reset':
      stores.clear();
      addQuads(typeof message.path === 'string' ? completeLines(readFileSync(message.path, 'utf8')) : message.nquads);
      break;
    case 'add':
      addQuads(message.nquads);
      break;
    case 'replace-graph':
      stores.delete(message.graph);
      addQuads(message.nquads);
      break;
    case 'query':
      parentPort.postMessage(
        engineBroken
          ? { id: message.id, ok: false, retire: true, reason: 'QUERY_FAILED', message: 'the query engine failed; try again' }
          : runQuery(message),
      );
      break;
    default:
      throw new Error(`unknown operation ${String(message.op)}`);
  }
});
