/**
 * The rules of the decision log in `adrs/` (ADR 0001, and the conventions in `adrs/README.md`):
 * how files are named and numbered, which statuses exist, and that every supersession is
 * recorded at both ends. Pure: it reads file names and texts, so fixtures prove each rule and the
 * real directory is checked by the same code.
 */

/** One file of the ADR directory: its name and its text. */
export interface AdrFile {
  readonly name: string;
  readonly text: string;
}

/** A broken rule, with the file it was found in. */
export interface AdrProblem {
  readonly file: string;
  readonly rule: AdrRule;
  readonly message: string;
}

export type AdrRule =
  | 'file-name'
  | 'duplicate-number'
  | 'title'
  | 'sections'
  | 'status'
  | 'link'
  | 'superseded-by'
  | 'supersedes'
  | 'partly-superseded-by';

/** The one file in `adrs/` that is not a decision: the log's own conventions. */
export const ADR_INDEX_FILE = 'README.md';

/** `NNNN-imperative-title.md`: four digits, then lower-case words joined by single hyphens. */
const FILE_NAME = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;

/** Nygard's sections, in this order. */
const SECTIONS = ['Status', 'Context', 'Decision', 'Consequences'] as const;

/** A reference to one ADR: `[ADR 0038](0038-….md)`, `ADR 0038` or `0038`. */
const REF = String.raw`(?:\[ADR (\d{4})\]\(([^)\s]+)\)|ADR (\d{4})(?![\w'’])|(?<!\w)(\d{4})(?![\w'’]))`;

/** The first words of a Status: one of ADR 0001's three statuses. */
const STATUS = new RegExp(String.raw`^(?:Proposed|Accepted|Superseded by ${REF})(?=$|[.\s])`);

/**
 * A whole supersession: "Supersedes" followed directly by one or more references
 * ("Supersedes [ADR 0002](…)", "Supersedes ADR 0002 and ADR 0013"). Any other words between
 * "Supersedes" and a reference ("Supersedes part of ADR 0013: …") make it partial.
 */
const SUPERSEDES_LIST = new RegExp(String.raw`\bSupersedes\s+(${REF}(?:(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)${REF})*)`, 'gi');
const PARTLY_SUPERSEDED_BY = new RegExp(String.raw`\bPartly superseded by\s+${REF}`, 'gi');
const MARKDOWN_LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;

interface Ref {
  readonly number: number;
  /** The file a markdown link names, without an anchor; undefined for a bare number. */
  readonly target?: string;
}

interface Adr {
  readonly file: string;
  readonly number: number;
  readonly status: string;
  readonly statusRef?: Ref;
  readonly supersedes: readonly Ref[];
  readonly partlySupersededBy: readonly Ref[];
}

/** Every problem of the log, in file order, then rule order. An empty list means the log keeps its rules. */
export function checkAdrLog(files: readonly AdrFile[]): AdrProblem[] {
  const problems: AdrProblem[] = [];
  const adrs: Adr[] = [];
  const sorted = [...files].sort((a, b) => a.name.localeCompare(b.name));

  for (const { name, text } of sorted) {
    if (name === ADR_INDEX_FILE) continue;
    const match = FILE_NAME.exec(name);
    if (!match) {
      problems.push({ file: name, rule: 'file-name', message: `${name}: an ADR file is named NNNN-imperative-title.md (four digits, lower-case words, single hyphens)` });
      continue;
    }
    adrs.push(readAdr(name, Number(match[1]), text, problems));
  }

  const byNumber = new Map<number, Adr[]>();
  for (const adr of adrs) byNumber.set(adr.number, [...(byNumber.get(adr.number) ?? []), adr]);
  for (const [number, same] of byNumber) {
    if (same.length > 1) {
      for (const adr of same.slice(1)) {
        problems.push({ file: adr.file, rule: 'duplicate-number', message: `${adr.file}: number ${pad(number)} is also used by ${same[0]!.file}` });
      }
    }
  }
  const names = new Set(sorted.map((f) => f.name));
  const one = (n: number): Adr | undefined => (byNumber.get(n)?.length === 1 ? byNumber.get(n)![0] : undefined);

  for (const { name, text } of sorted) {
    if (!FILE_NAME.test(name)) continue;
    for (const link of text.matchAll(MARKDOWN_LINK)) {
      const target = link[2]!.split('#')[0]!;
      const linked = FILE_NAME.exec(target);
      if (!linked) continue;
      if (!names.has(target)) {
        problems.push({ file: name, rule: 'link', message: `${name}: the link to ${target} names no file in adrs/` });
      }
      const said = /^ADR (\d{4})$/.exec(link[1]!);
      if (said && said[1] !== linked[1]) {
        problems.push({ file: name, rule: 'link', message: `${name}: the link "${link[1]}" points at ${target}, which is ADR ${linked[1]}` });
      }
    }
  }

  for (const adr of adrs) {
    if (adr.statusRef) {
      const by = adr.statusRef.number;
      const successor = one(by);
      if (!successor) {
        problems.push({ file: adr.file, rule: 'superseded-by', message: `${adr.file}: is "Superseded by ${pad(by)}", but no single ADR has that number` });
      } else if (successor.number <= adr.number) {
        problems.push({ file: adr.file, rule: 'superseded-by', message: `${adr.file}: is "Superseded by ${pad(by)}", an older ADR; only a later ADR supersedes an earlier one` });
      } else if (!successor.supersedes.some((r) => r.number === adr.number)) {
        problems.push({
          file: adr.file,
          rule: 'superseded-by',
          message: `${adr.file}: is "Superseded by ${pad(by)}", but ${successor.file} does not say "Supersedes ${pad(adr.number)}" in its Status`,
        });
      }
    }
    for (const ref of adr.supersedes) {
      const target = one(ref.number);
      if (!target) {
        problems.push({ file: adr.file, rule: 'supersedes', message: `${adr.file}: "Supersedes ${pad(ref.number)}" names no single ADR` });
      } else if (target.number >= adr.number) {
        problems.push({ file: adr.file, rule: 'supersedes', message: `${adr.file}: "Supersedes ${pad(ref.number)}" names a later ADR; only a later ADR supersedes an earlier one` });
      } else if (target.statusRef?.number !== adr.number) {
        problems.push({
          file: adr.file,
          rule: 'supersedes',
          message: `${adr.file}: "Supersedes ${pad(ref.number)}" as a whole, but ${target.file} has the Status "${firstLine(target.status)}", not "Superseded by ${pad(adr.number)}" (write "Supersedes part of ${pad(ref.number)}: …" for a partial one)`,
        });
      }
    }
    for (const ref of adr.partlySupersededBy) {
      const successor = one(ref.number);
      if (!successor) {
        problems.push({ file: adr.file, rule: 'partly-superseded-by', message: `${adr.file}: "Partly superseded by ${pad(ref.number)}" names no single ADR` });
      } else if (!mentions(successor.status, adr.number)) {
        problems.push({
          file: adr.file,
          rule: 'partly-superseded-by',
          message: `${adr.file}: "Partly superseded by ${pad(ref.number)}", but the Status of ${successor.file} does not name ADR ${pad(adr.number)}`,
        });
      }
    }
  }
  return problems;
}

function readAdr(file: string, number: number, text: string, problems: AdrProblem[]): Adr {
  const title = /^# (\d+)\. \S/.exec(text);
  if (!title) {
    problems.push({ file, rule: 'title', message: `${file}: the first line is "# ${number}. <Title>"` });
  } else if (Number(title[1]) !== number) {
    problems.push({ file, rule: 'title', message: `${file}: the title says ${title[1]}, the file name ${pad(number)}` });
  }

  const headings = [...text.matchAll(/^## (.+?)\s*$/gm)].map((m) => m[1]!);
  const at = SECTIONS.map((s) => headings.indexOf(s));
  if (at.some((i, k) => i < 0 || (k > 0 && i < at[k - 1]!))) {
    problems.push({ file, rule: 'sections', message: `${file}: needs the sections ${SECTIONS.map((s) => `## ${s}`).join(', ')}, in that order (found ${headings.join(', ') || 'none'})` });
  }

  // An ADR with a bad status still holds its number, so a repeat of it is still found.
  const status = sectionText(text, 'Status');
  if (status === undefined) {
    problems.push({ file, rule: 'status', message: `${file}: has no Status (Proposed, Accepted or "Superseded by NNNN")` });
    return { file, number, status: '', supersedes: [], partlySupersededBy: [] };
  }
  const head = STATUS.exec(status);
  if (!head) {
    problems.push({ file, rule: 'status', message: `${file}: the Status starts with Proposed, Accepted or "Superseded by NNNN", not "${firstLine(status)}"` });
    return { file, number, status, supersedes: [], partlySupersededBy: [] };
  }
  const statusRef = status.startsWith('Superseded by') ? refFrom(head, 1) : undefined;
  const supersedes = [...status.matchAll(SUPERSEDES_LIST)].flatMap((m) => refsIn(m[1]!));
  const partlySupersededBy = [...status.matchAll(PARTLY_SUPERSEDED_BY)].map((m) => refFrom(m, 1));
  return { file, number, status, statusRef, supersedes, partlySupersededBy };
}

/** The text of a `## name` section, trimmed, or undefined if there is none or it is empty. */
function sectionText(text: string, name: string): string | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${name}`);
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join('\n').trim();
  return body === '' ? undefined : body;
}

/** The reference whose four capture groups start at `first` in `match`. */
function refFrom(match: RegExpMatchArray, first: number): Ref {
  const number = Number(match[first] ?? match[first + 2] ?? match[first + 3]);
  const target = match[first + 1]?.split('#')[0];
  return target ? { number, target } : { number };
}

function refsIn(list: string): Ref[] {
  return [...list.matchAll(new RegExp(REF, 'g'))].map((m) => refFrom(m, 1));
}

/** True if the text names the number anywhere ("ADR 0002", "0002's"), as partial supersessions do. */
function mentions(status: string, number: number): boolean {
  return new RegExp(String.raw`(?<!\d)${pad(number)}(?!\d)`).test(status);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}

function pad(n: number): string {
  return String(n).padStart(4, '0');
}
