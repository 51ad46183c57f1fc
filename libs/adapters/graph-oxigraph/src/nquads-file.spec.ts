import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Triple } from '@toolgate/contracts';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OxigraphKnowledgeGraph } from './oxigraph-knowledge-graph.js';
import { tenantGraphIri } from './terms.js';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-graph-mode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const says = (subject: string, text: string): Triple => ({
  subject: { type: 'iri', value: subject },
  predicate: { type: 'iri', value: 'urn:ex:says' },
  object: { type: 'literal', value: text },
});
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('world-readable graph files', () => {
  // The most permissive umask: whatever the file gets is what the code asked for.
  let umask = 0;
  beforeEach(() => {
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
  });

  let n = 0;
  const fresh = () => join(dir, `case-${n++}`, 'knowledge-graph.nq');

  it('creates the file 0600 and its directory 0700', async () => {
    const path = fresh();
    const graph = await OxigraphKnowledgeGraph.open({ path });
    await graph.add('acme', [says('urn:ex:a', 'secret finding')]);
    await graph.close();
    expect(mode(path)).toBe(0o600);
    expect(mode(join(path, '..'))).toBe(0o700);
  });

  it('keeps the file 0600 through a rewrite and leaves no temporary copy beside it', async () => {
    const path = fresh();
    const graph = await OxigraphKnowledgeGraph.open({ path });
    await graph.add('acme', [says('urn:toolgate:team:a', 'roster')]);
    await graph.replace('acme', 'urn:toolgate:team:', [says('urn:toolgate:team:b', 'new roster')]);
    await graph.add('acme', [says('urn:ex:after', 'appended after the rewrite')]);
    await graph.close();
    expect(mode(path)).toBe(0o600);
    expect(readdirSync(join(path, '..'))).toEqual(['knowledge-graph.nq']);
  });

  it.each([0o644, 0o666, 0o604, 0o640, 0o777])('narrows an existing file of mode %o to 0600 when it is opened', async (wide) => {
    const path = fresh();
    const first = await OxigraphKnowledgeGraph.open({ path });
    await first.add('acme', [says('urn:ex:a', 'kept')]);
    await first.close();
    chmodSync(path, wide);

    const reopened = await OxigraphKnowledgeGraph.open({ path });
    expect(mode(path)).toBe(0o600);
    expect(reopened.opened.quads).toBe(1);
    await reopened.close();
  });

  it('narrows a file torn by a crash before rewriting it', async () => {
    const path = fresh();
    const first = await OxigraphKnowledgeGraph.open({ path });
    await first.add('acme', [says('urn:ex:a', 'kept')]);
    await first.close();
    writeFileSync(path, `${readFileSync(path, 'utf8')}<urn:ex:b> <urn:ex:says> "half`, { mode: 0o644 });
    chmodSync(path, 0o644);

    const reopened = await OxigraphKnowledgeGraph.open({ path });
    expect(reopened.opened.droppedBytes).toBeGreaterThan(0);
    expect(mode(path)).toBe(0o600);
    await reopened.close();
  });

  it('never writes through a link planted at the old temporary name', async () => {
    const path = fresh();
    const graph = await OxigraphKnowledgeGraph.open({ path });
    const target = join(dir, `planted-target-${n}`);
    writeFileSync(target, 'untouched');
    // The name the rewrite used before it picked a fresh one per write.
    symlinkSync(target, join(path, '..', `.knowledge-graph.nq.${process.pid}.tmp`));
    await graph.replace('acme', 'urn:toolgate:team:', [says('urn:toolgate:team:a', `graph ${tenantGraphIri('acme')}`)]);
    await graph.close();
    expect(readFileSync(target, 'utf8')).toBe('untouched');
    expect(mode(path)).toBe(0o600);
  });
});
