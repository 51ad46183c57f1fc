import type { ApprovalRecord, AuditRecord, EgressSettings, ExplainResult, InvokeResult, ToolManifest } from '@toolgate/contracts';

/** Human-readable renderings of API results; `--json` prints the raw result instead. */
export function formatTools(tools: readonly ToolManifest[]): string {
  if (tools.length === 0) return 'No tools are available to you.';
  const width = Math.max(...tools.map((t) => `${t.name}@${t.version}`.length));
  return tools
    .map((t) => `${`${t.name}@${t.version}`.padEnd(width)}  ${t.risk.padEnd(8)}  ${t.description.split('\n')[0]}`)
    .join('\n');
}

/** What a `--format` export says beside its array: which name stands for which tool, and what it left out. */
export function exportNotes(exported: {
  readonly aliases: readonly { readonly alias: string; readonly tool: string }[];
  readonly withheld: readonly { readonly tool: string; readonly reason: string }[];
}): string[] {
  return [
    ...exported.aliases.map((a) => `'${a.alias}' stands for '${a.tool}' (its name breaks this format's naming rule); a call by either name reaches it`),
    ...exported.withheld.map((w) => `'${w.tool}' is left out: ${w.reason}`),
  ];
}

export function formatInvoke(result: InvokeResult): string {
  const repairs = result.repaired?.length ? `\nrepaired: ${result.repaired.map((r) => r.detail).join('; ')}` : '';
  if (result.ok) return `${JSON.stringify(result.output, null, 2)}${repairs}`;
  const d = result.denial;
  return `denied at ${d.gate}: ${d.code}: ${d.message}${d.hint ? `\nhint: ${d.hint}` : ''}${repairs}`;
}

export function formatExplain(result: ExplainResult): string {
  const lines = [`would run: ${result.wouldRun ? 'yes' : 'no'}`, `gates passed: ${result.passed.join(', ') || 'none'}`];
  if (result.denial) lines.push(`stops at ${result.denial.gate}: ${result.denial.code}: ${result.denial.message}`);
  if (result.denial?.hint) lines.push(`hint: ${result.denial.hint}`);
  if (result.approvalRequired) lines.push(`needs approval of payload ${result.payloadDigest ?? ''}`.trim());
  return lines.join('\n');
}

export function formatApprovals(records: readonly ApprovalRecord[]): string {
  if (records.length === 0) return 'No approval requests.';
  return records.map(formatApproval).join('\n\n');
}

export function formatApproval(a: ApprovalRecord): string {
  return [
    `${a.id}  ${a.status}  ${a.tool}@${a.version}  requested by ${a.requester}`,
    `  args: ${JSON.stringify(a.args)}`,
    `  payload: ${a.payloadDigest}`,
    `  expires: ${new Date(a.expiresAt).toISOString()}`,
    ...(a.decidedBy ? [`  decided by ${a.decidedBy}${a.selfApproved ? ' (self-approval)' : ''}${a.reason ? `: ${a.reason}` : ''}`] : []),
  ].join('\n');
}

/**
 * One approval as `approvals show` prints it: the record, then where its arguments hold characters
 * that do not show as themselves and the arguments with those written out, then the files note.
 */
export function formatApprovalView(a: ApprovalRecord & { readonly hidden?: readonly string[]; readonly argsDisplay?: unknown; readonly note?: string }): string {
  return [
    formatApproval(a),
    ...(a.hidden?.length ? [`  hidden characters: ${a.hidden.join('; ')}`, `  args as shown: ${JSON.stringify(a.argsDisplay)}`] : []),
    ...(a.note ? [`  note: ${a.note}`] : []),
  ].join('\n');
}

export function formatEgress(e: EgressSettings): string {
  if (!e.enabled) return 'egress: disabled (every host is blocked)';
  if (e.allowAny) return 'egress: enabled for any public host';
  return e.hosts.length ? `egress: enabled for ${e.hosts.join(', ')}` : 'egress: enabled, but no host is allowed (everything is blocked)';
}

// Wide enough for the longest kind (`approval_requested`), so the columns line up.
const EVENT_WIDTH = 18;

export function formatAuditRecords(records: readonly AuditRecord[]): string {
  if (records.length === 0) return 'No audit records.';
  return records
    .map((r) => {
      const who = [r.tenant, r.principal].filter(Boolean).join('/');
      const what = r.tool ? `${r.tool}@${r.version ?? '?'}` : '';
      const why = r.code ? ` ${r.gate ?? ''}:${r.code}` : '';
      // An approval record says which approval and what came of it.
      const approval = r.approvalId ? ` approval ${r.approvalId}${r.detail ? `: ${r.detail}` : ''}` : '';
      return `#${r.seq} ${r.ts} ${r.event.padEnd(EVENT_WIDTH)} ${who} ${what}${why}${approval}`.trimEnd();
    })
    .join('\n');
}

/** The server's answer to `audit verify --remote`: whether the trail holds, for the caller's tenant only. */
export function formatTenantAuditReport(r: { readonly ok: boolean; readonly tenant: string; readonly fault?: { readonly reason: string } }): string {
  return r.ok ? `OK: the audit trail verifies (asked for tenant ${r.tenant})` : `FAULT: ${r.fault?.reason ?? 'the audit trail does not verify'}`;
}

