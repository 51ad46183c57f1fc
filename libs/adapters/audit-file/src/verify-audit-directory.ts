import { stat } from 'node:fs/promises';
import type { AuditReceipt, AuditReport } from '@toolgate/contracts';
import { createFrameDigester, type DigestAlgorithm } from '@toolgate/adapter-kit-audit';
import { verifyTrail } from './trail-reader.js';

/** Options of the offline verifier. */
export interface VerifyAuditDirectoryOptions {
  /** The audit directory itself (the server's `<data dir>/audit`). */
  readonly dir: string;
  /** The trail's HMAC key, if it was written with one (a string is used as its UTF-8 bytes). */
  readonly hmacKey?: string | Uint8Array;
  /**
   * A receipt kept somewhere else (a log, a ticket, another machine). A hash chain alone cannot
   * show that records were cut from its end; a trail that no longer holds this receipt can.
   */
  readonly anchor?: AuditReceipt;
}

/** The offline verifier's report: the port's report plus what an operator needs to act on it. */
export interface DirectoryAuditReport extends AuditReport {
  /** The last verified record. */
  readonly head?: AuditReceipt;
  /** Bytes of a partial final frame (an interrupted write the next writer start will cut). */
  readonly tornBytes: number;
  readonly algorithm?: DigestAlgorithm;
  readonly keyId?: string;
}

/**
 * Verifies an audit directory offline (the `toolgate audit verify` command): every segment
 * header, every frame digest, and the chain across all segments; it names the first bad record.
 * It takes no lock and changes nothing, so it can run beside a live writer.
 */
export async function verifyAuditDirectory(options: VerifyAuditDirectoryOptions): Promise<DirectoryAuditReport> {
  const digester = createFrameDigester(options.hmacKey);
  const empty = { ok: false, records: 0, segments: 0, tornBytes: 0 } as const;
  try {
    if (!(await stat(options.dir)).isDirectory()) return { ...empty, fault: { reason: `${options.dir} is not a directory` } };
  } catch {
    return { ...empty, fault: { reason: `there is no audit directory at ${options.dir}` } };
  }
  const anchor = options.anchor;
  let anchorSeen: string | undefined;
  const checked = await verifyTrail({
    dir: options.dir,
    digester,
    allowTorn: true,
    ...(anchor
      ? {
          onFrame: (_segment: number, seq: number, digest: string) => {
            if (seq === anchor.seq) anchorSeen = digest;
          },
        }
      : {}),
  });
  const first = checked.segments[0]?.header;
  const base = {
    ...checked.report,
    tornBytes: checked.tornBytes,
    ...(checked.report.records > 0 ? { head: { seq: checked.head.seq, digest: checked.head.digest } } : {}),
    ...(first ? { algorithm: first.algorithm, ...(first.keyId ? { keyId: first.keyId } : {}) } : {}),
  };
  if (!base.ok) return base;
  if (checked.segments.length === 0) return { ...base, ok: false, fault: { reason: 'the directory holds no audit segments (audit-00000001.log, …)' } };
  if (anchor && anchorSeen !== anchor.digest) {
    const reason =
      anchorSeen === undefined
        ? `the trail ends at seq ${checked.head.seq}, before the anchor seq ${anchor.seq}: records were cut from its end`
        : `the record at the anchor seq ${anchor.seq} has another digest: the trail was rewritten`;
    return { ...base, ok: false, fault: { seq: anchor.seq, reason } };
  }
  return base;
}

/** Printable summary of a verification: what was checked and, if any, the first fault. */
export function formatAuditReport(report: AuditReport & Partial<Pick<DirectoryAuditReport, 'head' | 'tornBytes' | 'algorithm' | 'keyId'>>): string {
  const checked = `${report.records} record${report.records === 1 ? '' : 's'} in ${report.segments} segment${report.segments === 1 ? '' : 's'}`;
  const lines: string[] = [];
  if (report.ok) {
    const digest = report.algorithm === 'hmac-sha256' ? `HMAC-SHA-256, key id ${report.keyId}` : report.algorithm === 'sha256' ? 'SHA-256' : undefined;
    lines.push(`audit trail OK: ${checked} verified${digest ? ` (${digest})` : ''}`);
    if (report.head) lines.push(`last record: seq ${report.head.seq}, digest ${report.head.digest}`);
  } else {
    lines.push(`audit trail DAMAGED: ${report.fault?.reason ?? 'unknown fault'}`);
    if (report.fault?.segment) {
      const at = [`segment ${report.fault.segment}`];
      if (report.fault.record !== undefined) at.push(`record ${report.fault.record}`);
      if (report.fault.seq !== undefined) at.push(`seq ${report.fault.seq}`);
      lines.push(`first fault: ${at.join(', ')}`);
    }
    lines.push(`checked ${checked} before the fault`);
  }
  if (report.tornBytes) {
    lines.push(`note: the last segment ends in a partial frame (${report.tornBytes} bytes) from an interrupted write; the writer cuts it and records a "recovered" event when it next opens the trail`);
  }
  return lines.join('\n');
}
