export {
  createMemoryTools,
  memoryWriteManifest,
  memoryQueryManifest,
  DEFAULT_QUERY_LIMITS,
  MAX_ABOUT_CHARS,
  MAX_FINDING_CHARS,
  MAX_QUERY_CHARS,
  type MemoryToolDeps,
} from './memory.tools.js';
export { seedTeamRoster, type RosterSummary } from './team-roster.js';
export { createKnownFailureRecorder, NOT_FOUND_PATTERN, type KnownFailureRecorderDeps } from './known-failures.js';
export { PREFIXES, QUERY_PROLOGUE, TG, teamMember } from './vocabulary.js';
