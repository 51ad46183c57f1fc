import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The gateway's layout (ADR 0034) as layers, highest first. A file may import only from a lower
 * layer or from its own folder; gates never import each other; nothing but the package index
 * imports the entry. Each unit is a top-level file or a folder (`name/`).
 */
const LAYERS: readonly { readonly name: string; readonly units: readonly string[] }[] = [
  { name: 'package index', units: ['index.ts'] },
  { name: 'entry', units: ['gateway.ts'] },
  { name: 'composition', units: ['gate-pipeline.ts', 'gateway-deps.ts'] },
  { name: 'roles', units: ['gates/', 'steps/', 'desks/'] },
  { name: 'helpers', units: ['registry/', 'schema/', 'egress/', 'audit/', 'denials/'] },
  { name: 'core', units: ['call.ts', 'limits.ts'] },
];

/** Helper folders may use one another, as long as no two of them do so both ways (directly or round about). */
const PEERS_MAY_IMPORT = new Set(['helpers']);

type ImportGraph = ReadonlyMap<string, readonly string[]>;

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Every non-test source file of libs/gateway/src, as a POSIX path relative to src. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [relative(SRC, path).split(sep).join('/')] : [];
  });
}

/**
 * The relative imports of each file (static, type-only, re-exports and `import()`), resolved to
 * src-relative `.ts` paths. Read with the TypeScript pre-processor, as tools/architecture does,
 * so an import inside a comment or a string is not mistaken for one.
 */
function readImportGraph(): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
    const local = specifiers
      .filter((s) => s.startsWith('./') || s.startsWith('../'))
      .map((s) => posix.normalize(posix.join(posix.dirname(file), s)).replace(/\.js$/, '.ts'));
    graph.set(file, local);
  }
  return graph;
}

function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

function layerOf(unit: string): number {
  return LAYERS.findIndex((layer) => layer.units.includes(unit));
}

/** Everything wrong with a graph's layout, one sentence each; empty when it follows ADR 0034. */
function layoutProblems(graph: ImportGraph): string[] {
  const problems: string[] = [];
  const peerEdges = new Map<string, Set<string>>();
  for (const [file, imports] of graph) {
    const from = unitOf(file);
    const fromLayer = layerOf(from);
    if (fromLayer === -1) {
      problems.push(`${file} is in no layer: place '${from}' in LAYERS (and ADR 0034)`);
      continue;
    }
    for (const target of imports) {
      if (target.startsWith('../')) {
        problems.push(`${file} imports ${target}, outside libs/gateway/src`);
        continue;
      }
      const to = unitOf(target);
      const toLayer = layerOf(to);
      if (target === 'index.ts') problems.push(`${file} imports the package index`);
      else if (target === 'gateway.ts' && file !== 'index.ts') problems.push(`${file} imports the entry gateway.ts`);
      if (from === 'gates/' && to === 'gates/') {
        problems.push(`gate ${file} imports gate ${target}: gates never import gates; share the code through denials/ or another helper`);
        continue;
      }
      if (from === to) continue;
      if (toLayer === -1) {
        problems.push(`${file} imports ${target}, which is in no layer`);
      } else if (toLayer < fromLayer) {
        problems.push(`${file} (${LAYERS[fromLayer]!.name}) imports ${target} (${LAYERS[toLayer]!.name}): imports run from the entry down, never up`);
      } else if (toLayer === fromLayer) {
        if (!PEERS_MAY_IMPORT.has(LAYERS[fromLayer]!.name)) problems.push(`${file} imports ${target}: ${from} and ${to} are both ${LAYERS[fromLayer]!.name} and must not import each other`);
        else peerEdges.set(from, (peerEdges.get(from) ?? new Set()).add(to));
      }
    }
  }
  for (const cycle of peerCycles(peerEdges)) problems.push(`helper folders import each other in a cycle: ${cycle.join(' → ')}`);
  return problems;
}

/** Each cycle among peer units, as the path that closes it. */
function peerCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const visit = (unit: string, path: string[]): void => {
    if (path.includes(unit)) {
      cycles.push([...path.slice(path.indexOf(unit)), unit]);
      return;
    }
    if (done.has(unit)) return;
    for (const next of edges.get(unit) ?? []) visit(next, [...path, unit]);
    done.add(unit);
  };
  for (const unit of edges.keys()) visit(unit, []);
  return cycles;
}

const graphOf = (entries: Record<string, string[]>): ImportGraph => new Map(Object.entries(entries));

describe('the layout of libs/gateway/src (ADR 0034)', () => {
  const graph = readImportGraph();

  it('reads the real import graph (so the checks below have something to check)', () => {
    expect(graph.size).toBeGreaterThan(30);
    const pipeline = graph.get('gate-pipeline.ts') ?? [];
    for (const gate of ['lookup', 'allow', 'budget', 'depth', 'size', 'permissions', 'input', 'approval', 'egress']) {
      expect(pipeline).toContain(`gates/${gate}-gate.ts`);
    }
    expect(graph.get('index.ts')).toContain('gateway.ts');
    // Re-exports, type-only imports and multi-line imports are all read.
    expect(graph.get('gates/allow-gate.ts')).toEqual(expect.arrayContaining(['call.ts', 'registry/tool-access.ts']));
  });

  it('has exactly the eight preflight gates (depth and size make up gate 4) in gates/', () => {
    const gates = [...graph.keys()].filter((f) => f.startsWith('gates/')).sort();
    expect(gates).toEqual(['allow', 'approval', 'budget', 'depth', 'egress', 'input', 'lookup', 'permissions', 'size'].map((g) => `gates/${g}-gate.ts`));
  });

  it('follows every rule: one-way imports, no gate importing a gate, nothing importing the entry', () => {
    expect(layoutProblems(graph)).toEqual([]);
  });

  it('lets every file of src resolve its relative imports to a file that exists', () => {
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((t) => !graph.has(t)).map((t) => `${file} → ${t}`));
    expect(missing).toEqual([]);
  });

  describe('each rule fails when broken', () => {
    it('a gate importing another gate', () => {
      const problems = layoutProblems(graphOf({ 'gates/audit-gate.ts': ['gates/budget-gate.ts'], 'gates/budget-gate.ts': [] }));
      expect(problems).toEqual([expect.stringContaining('gates never import gates')]);
    });

    it('anything but the index importing gateway.ts, and anything importing the index', () => {
      expect(layoutProblems(graphOf({ 'gateway.ts': [], 'desks/approval-desk.ts': ['gateway.ts'] }))).toEqual(
        expect.arrayContaining([expect.stringContaining('imports the entry gateway.ts')]),
      );
      expect(layoutProblems(graphOf({ 'index.ts': [], 'gate-pipeline.ts': ['index.ts'] }))).toEqual(
        expect.arrayContaining([expect.stringContaining('imports the package index')]),
      );
      expect(layoutProblems(graphOf({ 'index.ts': ['gateway.ts'], 'gateway.ts': [] }))).toEqual([]);
    });

    it('a desk importing the pipeline, a step importing a gate, a helper importing a step, the core importing a helper', () => {
      const upward = graphOf({
        'desks/approval-desk.ts': ['gate-pipeline.ts'],
        'steps/commit-step.ts': ['gates/budget-gate.ts'],
        'schema/nesting.ts': ['steps/execute-step.ts'],
        'call.ts': ['audit/canonical-json.ts'],
        'gate-pipeline.ts': [],
        'gates/budget-gate.ts': [],
        'steps/execute-step.ts': [],
        'audit/canonical-json.ts': [],
      });
      const problems = layoutProblems(upward);
      expect(problems).toHaveLength(4);
      expect(problems.filter((p) => p.includes('never up'))).toHaveLength(3);
      expect(problems).toEqual(expect.arrayContaining([expect.stringContaining('steps/ and gates/ are both roles')]));
    });

    it('two helper folders importing each other, directly or round about', () => {
      const direct = graphOf({ 'audit/a.ts': ['denials/b.ts'], 'denials/b.ts': ['audit/a.ts'] });
      expect(layoutProblems(direct)).toEqual([expect.stringContaining('cycle: audit/ → denials/ → audit/')]);
      const roundAbout = graphOf({ 'audit/a.ts': ['schema/c.ts'], 'schema/c.ts': ['denials/b.ts'], 'denials/b.ts': ['audit/a.ts'] });
      expect(layoutProblems(roundAbout)).toEqual([expect.stringContaining('cycle')]);
      expect(layoutProblems(graphOf({ 'audit/a.ts': ['denials/b.ts'], 'denials/b.ts': [] }))).toEqual([]);
    });

    it('a file in a folder no layer names, and an import leaving src', () => {
      expect(layoutProblems(graphOf({ 'misc/util.ts': [] }))).toEqual([expect.stringContaining("place 'misc/' in LAYERS")]);
      expect(layoutProblems(graphOf({ 'call.ts': ['../test/harness.ts'] }))).toEqual([expect.stringContaining('outside libs/gateway/src')]);
    });
  });
});

