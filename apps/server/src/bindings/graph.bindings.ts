import { join } from 'node:path';
import { OxigraphKnowledgeGraph } from '@toolgate/adapter-graph-oxigraph';
import { KnowledgeGraphToken, token, type Token } from '@toolgate/contracts';
import { StartupError } from '../startup-error.js';
import { ConfigToken, LogToken } from '../tokens.js';
import type { Binder } from './binder.js';

const OxigraphToken: Token<OxigraphKnowledgeGraph> = token('OxigraphKnowledgeGraph');

/**
 * Port `KnowledgeGraph`: one backend, Oxigraph over an N-Quads file in the data dir, so there is
 * no setting to choose it. A second backend would add a setting and a table like the state's.
 */
export function bindGraph(binder: Binder): void {
  binder
    .resolved(OxigraphToken, { config: ConfigToken, log: LogToken }, async ({ config, log }) => {
      try {
        return await OxigraphKnowledgeGraph.open({
          path: join(config.dataDir, 'knowledge-graph.nq'),
          onRecovered: ({ path, droppedBytes }) =>
            log('warn', `knowledge graph ${path}: dropped a final line torn by a crash (${droppedBytes} bytes, never acknowledged); everything before it is kept`),
        });
      } catch (error) {
        throw new StartupError(`knowledge graph: ${(error as Error).message}`);
      }
    })
    .onDeactivation((graph) => graph.close());
  binder.resolved(KnowledgeGraphToken, { graph: OxigraphToken }, ({ graph }) => graph);
}
