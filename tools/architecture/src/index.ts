export type { ArchGraph, ArchProject, ArchDependency, ArchExternalImport, Violation, RuleId } from './arch-graph.js';
export { checkArchitecture } from './check-architecture.js';
export { readWorkspaceGraph } from './workspace-graph.js';
export { extractImportSpecifiers } from './import-scanner.js';
export { SCOPES, ALLOWED_SCOPES, allowedScopesForTests, COMPOSITION_ROOT, type Scope } from './rules.js';
