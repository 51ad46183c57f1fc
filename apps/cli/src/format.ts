import { flattenText, type ApprovalRecord, type AuditRecord, type EgressSettings, type ExplainResult, type InvokeResult, type Repair, type ToolManifest, type WhoAmI } from '@toolgate/contracts';

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

/**
 * One line per repair the gateway made to the arguments, naming its kind and argument: a repair
 * changes what the call does (a clamped count runs as the bound), so none is left out. The path
 * and detail quote the caller's arguments and the tool's schema, so each is one flattened line.
 */
export function repairLines(repaired: readonly Repair[] | undefined): string[] {
  return (repaired ?? []).map((r) => `repaired: ${flattenText(String(r.kind), 16)} ${flattenText(String(r.path), 200) || '(the arguments)'}: ${flattenText(String(r.detail), 300)}`);
}

export function formatInvoke(result: InvokeResult): string {
  const repairs = repairLines(result.repaired).map((line) => `\n${line}`).join('');
  if (result.ok) return `${JSON.stringify(result.output, null, 2)}${repairs}`;
  const d = result.denial;
  return `denied at ${d.gate}: ${d.code}: ${d.message}${d.hint ? `\nhint: ${d.hint}` : ''}${repairs}`;
}

export function formatExplain(result: ExplainResult): string {
  const lines = [`would run: ${result.wouldRun ? 'yes' : 'no'}`, `gates passed: ${result.passed.join(', ') || 'none'}`];
  if (result.denial) lines.push(`stops at ${result.denial.gate}: ${result.denial.code}: ${result.denial.message}`);
  if (result.denial?.hint) lines.push(`hint: ${result.denial.hint}`);
  if (result.approvalRequired) lines.push(`needs approval of payload ${result.payloadDigest ?? ''}`.trim());
  // The payload an approval would bind is the repaired one: say how it differs from what was typed.
  lines.push(...repairLines(result.repaired));
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


/** One tool source as `health`, `tools sources` and `tools.list` report it. */
export interface SourceLine {
  readonly name: string;
  readonly state: string;
  readonly transport: string;
  readonly attempt: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly held: number;
  readonly since: number;
}

/** One line per source: its state first, since that is what explains a missing tool. */
export function formatSources(sources: readonly SourceLine[]): string {
  if (sources.length === 0) return 'No tool sources are configured.';
  const names = sources.map((s) => flattenText(String(s.name), 64));
  const width = Math.max(...names.map((n) => n.length));
  return sources
    .map((s, i) => {
      const retry = s.attempt > 0 ? ` (attempt ${s.attempt})` : '';
      const counts = `${s.accepted} accepted, ${s.rejected} rejected, ${s.held} held`;
      return `${names[i]!.padEnd(width)}  ${`${flattenText(String(s.state), 16)}${retry}`.padEnd(24)}  ${flattenText(String(s.transport), 8).padEnd(5)}  ${counts}  since ${isoOf(s.since)}`;
    })
    .join('\n');
}

/** `toolgate health`: the verdict, then where each source is (a server before issue 12 sends none). */
export function formatHealth(h: { readonly ok: boolean; readonly version: string; readonly reasons: readonly string[]; readonly sources?: readonly SourceLine[] }): string {
  const verdict = h.ok ? `ok (version ${h.version})` : `degraded: ${h.reasons.join('; ')}`;
  return h.sources?.length ? `${verdict}\n${formatSources(h.sources)}` : verdict;
}

/** `toolgate whoami`: one line per fact, the budget with its reset time. */
export function formatWhoAmI(w: WhoAmI): string {
  const p = w.principal;
  const line = (text: string) => flattenText(text, 300);
  return [
    line(`principal ${p.id} in tenant ${p.tenant}${p.issuer ? ` (token of ${p.issuer})` : ''}`),
    line(`roles: ${p.roles.length > 0 ? p.roles.join(', ') : 'none'}`),
    line(`standing grants: ${w.grants.length > 0 ? w.grants.map((g) => `${g.type}:${g.scope}`).join(', ') : 'none'}`),
    `tools you may call: ${w.visibleTools}`,
    w.budget
      ? `budget: ${w.budget.remaining} of ${w.budget.calls} calls left in this ${w.budget.windowSeconds} s window; whole again at ${w.budget.resetsAt}`
      : 'budget: unlimited',
  ].join('\n');
}

/** An epoch-ms time as ISO 8601, or `?` for one no Date can hold (toISOString would throw). */
function isoOf(ms: number): string {
  return typeof ms === 'number' && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : '?';
}

/** A held tool as `tools.held` answers it (see the gateway's `HeldTool`). */
export interface HeldLine {
  readonly tool: string;
  readonly source: string;
  readonly reason: string;
  readonly pinnedDigest: string;
  /** Who pinned `pinnedDigest`: `first-seen`, or `<tenant>/<principal id>` of an acceptance (ADR 0069). */
  readonly pinnedBy?: string;
  readonly newDigest: string;
  readonly heldSince: number;
  readonly changed: readonly string[];
  readonly description?: { readonly before: string; readonly after: string };
  readonly properties?: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] };
}

/** One shown value of a held definition: the server's text, on one bounded line. */
const shown = (text: unknown, max: number) => flattenText(String(text), max);

/**
 * `toolgate tools held`: each held tool with both digests, what changed, and the command that
 * accepts it. The excerpts and names are the untrusted server's text: each is flattened to one
 * bounded line here too, whatever the server sent, so it cannot steer the operator's terminal.
 */
export function formatHeldTools(held: readonly HeldLine[]): string {
  if (held.length === 0) return 'No tool is held: every definition is the one pinned.';
  return held
    .map((h) => {
      const tool = shown(h.tool, 128);
      const why = h.reason === 'integrity' ? 'its manifest does not match its integrity' : 'its definition changed since it was pinned';
      const props = h.properties;
      const list = (names: readonly string[]) => shown(names.join(', ') || 'none', 300);
      return [
        `${tool} (source ${shown(h.source, 64)}): held, ${why}`,
        `  changed: ${shown(h.changed.join(', ') || 'nothing named', 300)}`,
        ...(h.description ? [`  description was: "${shown(h.description.before, 200)}"`, `  description now: "${shown(h.description.after, 200)}"`] : []),
        ...(props
          ? [`  input properties added: ${list(props.added)}`, `  input properties removed: ${list(props.removed)}`, `  input properties changed: ${list(props.changed)}`]
          : []),
        `  pinned: ${shown(h.pinnedDigest, 80)}${h.pinnedBy === undefined ? '' : ` (by ${shown(h.pinnedBy, 256)})`}`,
        `  now:    ${shown(h.newDigest, 80)}`,
        `  held since ${isoOf(h.heldSince)}`,
        `  accept it once reviewed: toolgate tools accept ${tool} --digest ${shown(h.newDigest, 80)}`,
      ].join('\n');
    })
    .join('\n\n');
}

/** `toolgate tools accept`: which definition is now the tool's pin. */
export function formatAccepted(pin: { readonly tool: string; readonly digest: string; readonly pinnedBy: string; readonly pinnedAt: number }): string {
  return `accepted ${shown(pin.tool, 128)} at ${shown(pin.digest, 80)} (pinned by ${shown(pin.pinnedBy, 128)} at ${isoOf(pin.pinnedAt)}); it is served again`;
}
