import { join } from 'node:path';
import { FileAuditSink, UnavailableAuditSink } from '@toolgate/adapter-audit-file';
import { PgAuditSink } from '@toolgate/adapter-audit-postgres';
import { AuditCorruptError, AuditSinkToken, AuditUnavailableError, type AuditSink } from '@toolgate/contracts';
import type { AuditKind, ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { ConfigToken, LogToken } from '../tokens.js';
import type { Binder } from './binder.js';

/** What every audit backend is opened with. */
interface AuditOptions {
  readonly hmacKey?: string;
}

/** Each audit backend (`TOOLGATE_AUDIT`) and how it opens. A new backend is one more row and one more `AuditKind`. */
const AUDIT_BACKENDS = {
  file: (config, options) => FileAuditSink.open(join(config.dataDir, 'audit'), options),
  postgres: (config, options) => PgAuditSink.open(config.databaseUrl!, options),
} satisfies Record<AuditKind, (config: ServerConfig, options: AuditOptions) => Promise<AuditSink>>;

/** The faults that mean "this trail cannot be written now", as opposed to a bug or a bad setting. */
const UNAVAILABLE = [AuditCorruptError, AuditUnavailableError];

/**
 * Opens the configured sink. A damaged trail does not stop the server: it keeps serving health
 * and says why, while every tool call is refused with AUDIT_UNAVAILABLE (fail closed).
 */
async function openAudit(config: ServerConfig, log: Log): Promise<AuditSink> {
  try {
    return await AUDIT_BACKENDS[config.audit](config, config.auditHmacKey ? { hmacKey: config.auditHmacKey } : {});
  } catch (error) {
    if (!UNAVAILABLE.some((kind) => error instanceof kind)) throw error;
    log('error', `audit trail unavailable, every tool call will be refused: ${(error as Error).message}`);
    return new UnavailableAuditSink((error as Error).message);
  }
}

/** Port `AuditSink`: opened on first use, closed (its directory lock released) with the container. */
export function bindAudit(binder: Binder): void {
  binder.resolved(AuditSinkToken, { config: ConfigToken, log: LogToken }, ({ config, log }) => openAudit(config, log)).onDeactivation((sink) => sink.close());
}
