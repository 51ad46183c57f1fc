export { PgAuditSink, MAX_TAIL_LIMIT, type PgAuditSinkOptions } from './pg-audit-sink.js';
export { AuditCorruptError, AuditUnavailableError } from '@toolgate/adapter-kit-audit';
export { AuditSchemaTooNewError } from './pg-audit-schema.js';
export { InvalidAuditEventError } from '@toolgate/adapter-kit-audit';
