/**
 * Performance targets a bench checks, and how they are printed. A missed target must stand out
 * from a met one (a reader skims the output), yet it never fails the run: benchmarks on a shared,
 * noisy machine are measurements, not tests.
 */

/** One target: what was measured against the bound it should meet. */
export interface TargetCheck {
  readonly kind: 'target';
  /** What is compared, e.g. `64 writers vs 1 writer`. */
  readonly name: string;
  readonly measured: number;
  /** `>=`: the measured value must reach the goal; `<` and `<=`: it must stay under it. */
  readonly comparison: '>=' | '<=' | '<';
  readonly goal: number;
  /** Printed after each number, e.g. `x` or ` µs`. */
  readonly unit: string;
  /** Digits after the point when printing; default 2. */
  readonly digits?: number;
}

/** What a bench returns: plain lines, and targets, which are printed and counted. */
export type BenchLine = string | TargetCheck;

/** A target check, for a bench to return among its lines. */
export function target(name: string, measured: number, comparison: TargetCheck['comparison'], goal: number, unit = '', digits = 2): TargetCheck {
  return { kind: 'target', name, measured, comparison, goal, unit, digits };
}

/** Whether the measurement meets its target; a measurement that is not a number never does. */
export function isMet(check: TargetCheck): boolean {
  if (!Number.isFinite(check.measured)) return false;
  switch (check.comparison) {
    case '>=':
      return check.measured >= check.goal;
    case '<=':
      return check.measured <= check.goal;
    case '<':
      return check.measured < check.goal;
  }
}

/** `  met     name: 12.3x (target >= 10x)` or `  MISSED  name: 6.1x (target >= 10x)  <-- MISSED`. */
export function formatTarget(check: TargetCheck): string {
  const digits = check.digits ?? 2;
  const shown = (n: number) => `${Number.isFinite(n) ? n.toFixed(digits) : String(n)}${check.unit}`;
  const body = `${check.name}: ${shown(check.measured)} (target ${check.comparison} ${shown(check.goal)})`;
  return isMet(check) ? `  met     ${body}` : `  MISSED  ${body}  <-- MISSED`;
}

/** One line or target of a bench's output, as printed. */
export function formatLine(line: BenchLine): string {
  return typeof line === 'string' ? line : formatTarget(line);
}

/**
 * The closing line of a run: how many targets were met and missed, naming the missed ones with
 * their bench, so the verdict is the last thing on screen.
 */
export function formatSummary(checks: readonly { readonly bench: string; readonly check: TargetCheck }[], failedBenches: readonly string[] = []): string {
  const missed = checks.filter((c) => !isMet(c.check));
  const met = checks.length - missed.length;
  const verdict =
    checks.length === 0
      ? 'targets: none checked'
      : missed.length === 0
        ? `targets: all ${met} met`
        : `targets: ${met} met, ${missed.length} MISSED (${missed.map((c) => `${c.bench}: ${c.check.name}`).join('; ')})`;
  const parts = [verdict];
  if (failedBenches.length > 0) parts.push(`${failedBenches.length} bench(es) FAILED to run (${failedBenches.join(', ')})`);
  return parts.join('; ');
}
