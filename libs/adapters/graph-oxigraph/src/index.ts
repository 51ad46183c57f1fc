export {
  OxigraphKnowledgeGraph,
  GraphFileError,
  type OxigraphKnowledgeGraphOptions,
  type GraphOpenReport,
  type GraphRecovery,
} from './oxigraph-knowledge-graph.js';
export { tenantGraphIri, TENANT_GRAPH_PREFIX } from './terms.js';
