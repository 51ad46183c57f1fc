import { token, type Token } from './token.js';
import type { DenialCode, Gate } from './invocation.js';

/**
 * What an audit record is about.
 *
 * - `authorized`: a call passed every gate and is about to run (written before anything is spent).
 * - `succeeded` / `failed`: the outcome of a call that ran.
 * - `denied`: a call refused at a gate (`gate`, `code`).
 * - `recovered`: the sink repaired a torn tail when it opened (`detail` says what it cut).
 * - `approval_requested`: a principal asked for an approval of one exact payload. `principal` is
 *   the requester, `approvalId` the approval, `argsDigest` the digest of its (repaired) arguments.
 *   Written before the approval exists, so no approval exists that the trail does not show.
 * - `approval_decided`: an approver decided an approval. `principal` is the decider, `detail` is
 *   `approved` or `denied`, `approvedBy` is set when approved, `approvalReason` holds the
 *   decider's reason (prefixed `self-approval` when the requester approved its own request).
 *   Written before the decision is stored (ADR 0020); if the store then does not apply it, a
 *   follow-up `approval_decided` record with the same `approvalId`, no `approvedBy`, and a
 *   `detail` beginning `not applied:` (or `outcome unknown:`) names the seq of the first.
 * - `tool_accepted`: an admin accepted a changed tool definition (ADR 0060). `principal` is the
 *   admin, `tool` and `version` the tool, `detail` names the accepted digest and the one it
 *   replaces. Written before the pin is stored; if the store then does not apply it, a follow-up
 *   `tool_accepted` record whose `detail` begins `not applied:` (or `outcome unknown:`) says so.
 */
export type AuditEventKind =
  | 'authorized'
  | 'succeeded'
  | 'failed'
  | 'denied'
  | 'recovered'
  | 'approval_requested'
  | 'approval_decided'
  | 'tool_accepted';

/**
 * One gateway decision. Never carries raw arguments: only their digest. String fields that
 * look like secrets are redacted by the sink before they are written.
 */
export interface AuditEvent {
  /** What the record is about (see {@link AuditEventKind}). */
  readonly event: AuditEventKind;
  /** ISO-8601 time of the decision. */
  readonly ts: string;
  /** Correlates the records of one call. */
  readonly callId?: string;
  /** The tenant the decision was made for. */
  readonly tenant?: string;
  /** The caller (or, on approval records, the requester or the decider). */
  readonly principal?: string;
  /** The tool called. */
  readonly tool?: string;
  /** The tool version called. */
  readonly version?: string;
  /** On `denied`: the gate that refused the call. */
  readonly gate?: Gate;
  /** On `denied`: the denial code the caller received. */
  readonly code?: DenialCode;
  /** On `succeeded` and `failed`: how long the handler ran, in milliseconds. */
  readonly durationMs?: number;
  /** `sha256:<hex>` of the canonical JSON of the (repaired) arguments. */
  readonly argsDigest?: string;
  /** The approver of the call's (or the decided) approval. */
  readonly approvedBy?: string;
  /**
   * On a call: `approval:<id>` or `self-approval`. On `approval_decided`: the decider's reason,
   * `self-approval`, or `self-approval: <reason>`.
   */
  readonly approvalReason?: string;
  /** Descriptions of the repairs applied to the input. */
  readonly repaired?: readonly string[];
  /** Free text for recovery and failure records (already sanitized). */
  readonly detail?: string;
  /** The approval an `approval_requested` or `approval_decided` record is about. */
  readonly approvalId?: string;
  /**
   * On a call's records: the OpenID issuer of the caller's token (ADR 0074); absent for a
   * principal of the principals file.
   */
  readonly issuer?: string;
  /**
   * On `authorized`, `succeeded` and `failed`: the standing grants (a role's or the tenant's) that
   * covered the tool's permissions, as `type:scope`, e.g. `["exec:*"]` (ADR 0022).
   */
  readonly grants?: readonly string[];
}

/** An event as stored: chained to the one before it. */
export interface AuditRecord extends AuditEvent {
  /** Position in the trail: 1 for the first record, one more for each after it. */
  readonly seq: number;
  /** Digest of the previous frame (the chain). */
  readonly prev: string;
  /** Digest of this frame. */
  readonly digest: string;
}

/** Proof that an event is durable. */
export interface AuditReceipt {
  /** The record's position in the trail. */
  readonly seq: number;
  /** The record's frame digest, which the next record chains to. */
  readonly digest: string;
}

/** Result of verifying the whole trail. */
export interface AuditReport {
  /** True when every record verified and the chain is unbroken. */
  readonly ok: boolean;
  /** Records verified (up to the fault, if there is one). */
  readonly records: number;
  /** Segments read (files for the file sink; 1 for PostgreSQL). */
  readonly segments: number;
  /** The first fault found, naming where it is. */
  readonly fault?: {
    /** The segment file name (or the table) holding the fault. */
    readonly segment?: string;
    /** The `seq` of the bad record, when it could be read. */
    readonly seq?: number;
    /** 1-based position of the bad frame in its segment. */
    readonly record?: number;
    /** What is wrong, in one line, naming the segment and record (never a host path). */
    readonly reason: string;
  };
}

/** A page of the trail, newest last. */
export interface AuditQuery {
  /** Only this tenant's records (non-operators always get this). */
  readonly tenant?: string;
  /** Only records of this principal. */
  readonly principal?: string;
  /** Records with `seq` greater than this. */
  readonly afterSeq?: number;
  /** At most this many of the newest matching records. */
  readonly limit: number;
}

/**
 * Where every gateway decision is written. Fails closed: a rejected append stops the call.
 * `append` resolves only once the record is durable.
 */
export interface AuditSink {
  /**
   * Writes one event and resolves once it is durable. Rejects with `InvalidAuditEventError` for an
   * event of the wrong shape and with `AuditUnavailableError` when nothing can be written; either
   * way the record does not exist and the call must not run.
   */
  append(event: AuditEvent): Promise<AuditReceipt>;
  /** Reads the whole trail and checks every digest and the chain; reports the first fault. */
  verify(): Promise<AuditReport>;
  /** The newest records matching `query`, oldest first; rejects with `AuditCorruptError` on damage. */
  tail(query: AuditQuery): Promise<readonly AuditRecord[]>;
  /** Whether appends can currently succeed, and if not, why (for `health`). */
  health(): { readonly ok: boolean; readonly reason?: string };
  /** Waits for pending appends, then releases the trail (lock, files, connections). */
  close(): Promise<void>;
}
/** The audit sink `apps/server` binds by `TOOLGATE_AUDIT` (files or PostgreSQL). */
export const AuditSinkToken: Token<AuditSink> = token('AuditSink');

/**
 * The trail is damaged: a bad digest, a broken chain, a gap or reorder, a damaged header or
 * segment (files), a head row that is not the last frame (PostgreSQL). The message names the
 * segment (or table) and the record; it carries no host path. The server answers every call with
 * `AUDIT_UNAVAILABLE` until an operator acts. Every sink throws this one class, so the composition
 * root handles damage without knowing which adapter found it.
 */
export class AuditCorruptError extends Error {
  override readonly name = 'AuditCorruptError';
  /** The verification report whose `fault` names the first bad segment/record. */
  readonly report: AuditReport;
  constructor(report: AuditReport) {
    super(`the audit trail is damaged: ${report.fault?.reason ?? 'unknown fault'}`);
    this.report = report;
  }
  /** The damaged segment's file name (or the table, for PostgreSQL). */
  get segment(): string | undefined {
    return this.report.fault?.segment;
  }
  /** 1-based position of the bad frame in its segment (absent for header and file faults). */
  get record(): number | undefined {
    return this.report.fault?.record;
  }
}

/**
 * The sink cannot accept appends: the directory is held by another writer, the database cannot be
 * reached or was migrated by a newer server, the HMAC key does not fit the trail, an earlier
 * `fdatasync` failed, or the sink is closed. Fail closed. Adapters may throw a subclass that says
 * more (e.g. a schema that is too new); callers catch this class.
 */
export class AuditUnavailableError extends Error {
  override readonly name: string = 'AuditUnavailableError';
}

/**
 * An event (or a stored frame) that does not have the shape of an `AuditEvent`: the sink refuses to
 * write it, and a reader refuses to trust it. Rejects one `append`, never the sink as a whole.
 */
export class InvalidAuditEventError extends Error {
  override readonly name = 'InvalidAuditEventError';
}
