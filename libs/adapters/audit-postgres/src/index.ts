export { PgAuditSink, MAX_TAIL_LIMIT, type PgAuditSinkOptions } from './pg-audit-sink.js';
export { AuditSchemaTooNewError } from './pg-audit-schema.js';
