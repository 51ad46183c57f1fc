import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { workspaceRoot } from '@nx/devkit';
import { describe, expect, it } from 'vitest';
import { checkAdrLog, type AdrFile, type AdrRule } from './adr-log.js';

/**
 * The decision log keeps ADR 0001's rules: names, numbers, statuses, and every supersession
 * recorded at both ends. The real `adrs/` must pass; each rule is proven by a fixture log that
 * breaks it, so the check cannot pass by reading nothing.
 */
const ADR_DIR = path.join(workspaceRoot, 'adrs');

function realLog(): AdrFile[] {
  return readdirSync(ADR_DIR, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    text: entry.isFile() ? readFileSync(path.join(ADR_DIR, entry.name), 'utf8') : '',
  }));
}

function adr(number: number, status: string, extra = ''): string {
  return `# ${number}. Do a thing\n\nDate: 2026-12-01\n\n## Status\n\n${status}\n\n## Context\n\nC.\n\n## Decision\n\nWe will ${extra}.\n\n## Consequences\n\n- None.\n`;
}

/** A small valid log: 0001 is wholly superseded by 0003; 0002 is partly superseded by 0003. */
function validLog(): AdrFile[] {
  return [
    { name: '0001-record-decisions.md', text: adr(1, 'Superseded by [ADR 0003](0003-do-it-again.md)') },
    { name: '0002-do-another-thing.md', text: adr(2, 'Accepted. Partly superseded by [ADR 0003](0003-do-it-again.md): the last consequence.') },
    {
      name: '0003-do-it-again.md',
      text: adr(3, 'Accepted. Supersedes [ADR 0001](0001-record-decisions.md). Supersedes part of [ADR 0002](0002-do-another-thing.md): its last consequence.'),
    },
    { name: 'README.md', text: '# The decision log\n' },
  ];
}

function replace(log: AdrFile[], name: string, text: string): AdrFile[] {
  return log.map((f) => (f.name === name ? { name, text } : f));
}

function rules(log: AdrFile[]): AdrRule[] {
  return checkAdrLog(log).map((p) => p.rule);
}

describe('adrs/', () => {
  it('keeps the rules of the decision log', () => {
    expect(checkAdrLog(realLog()).map((p) => p.message).join('\n')).toBe('');
  });

  it('is read for real: ADRs 0002, 0013 and 0019 are superseded, and unlinking a successor breaks the log', () => {
    const log = realLog();
    for (const [old, successor] of [
      ['0002', '0038'],
      ['0013', '0039'],
      ['0019', '0040'],
    ] as const) {
      const file = log.find((f) => f.name.startsWith(`${successor}-`))!;
      const unlinked = file.text.replace(/Supersedes \[ADR \d{4}\]\([^)]*\)\./, 'Accepted.');
      expect(unlinked).not.toBe(file.text);
      const problems = checkAdrLog(replace(log, file.name, unlinked));
      expect(problems.map((p) => [p.rule, p.file.slice(0, 4)])).toEqual([['superseded-by', old]]);
    }
  });
});

describe('the rules, on fixture logs', () => {
  it('accepts a valid log, whole and partial supersession and the README included', () => {
    expect(checkAdrLog(validLog())).toEqual([]);
  });

  describe('file names', () => {
    for (const name of ['0004_do-more.md', '4-do-more.md', '00004-do-more.md', '0004-Do-More.md', '0004-do--more.md', '0004-do-more.txt', '0004-do-more', 'notes.md', '0004-.md']) {
      it(`refuses ${JSON.stringify(name)}`, () => {
        const problems = checkAdrLog([...validLog(), { name, text: adr(4, 'Accepted') }]);
        expect(problems).toEqual([expect.objectContaining({ rule: 'file-name', file: name })]);
      });
    }
  });

  it('refuses a repeated number, naming both files', () => {
    const problems = checkAdrLog([...validLog(), { name: '0002-do-it-twice.md', text: adr(2, 'Accepted') }]);
    expect(problems).toEqual([expect.objectContaining({ rule: 'duplicate-number' })]);
    expect(problems[0]!.message).toContain('0002-do-another-thing.md');
  });

  it('still finds a repeated number when the repeat has a bad Status or none', () => {
    for (const text of [adr(2, 'Rejected'), adr(2, 'Accepted').replace('## Status\n\nAccepted\n\n', '')]) {
      expect(rules([...validLog(), { name: '0002-do-it-twice.md', text }])).toContain('duplicate-number');
    }
  });

  it('refuses a title whose number is not the file number, and a file without a title', () => {
    expect(rules(replace(validLog(), '0002-do-another-thing.md', adr(7, 'Accepted')))).toEqual(['title']);
    expect(rules(replace(validLog(), '0002-do-another-thing.md', adr(2, 'Accepted').replace(/^# 2\. /, 'Do a thing ')))).toEqual(['title']);
  });

  it('refuses a missing section and sections out of order', () => {
    expect(rules(replace(validLog(), '0002-do-another-thing.md', adr(2, 'Accepted').replace('## Consequences', '## Outcome')))).toEqual(['sections']);
    const swapped = adr(2, 'Accepted').replace('## Context', '## TMP').replace('## Decision', '## Context').replace('## TMP', '## Decision');
    expect(rules(replace(validLog(), '0002-do-another-thing.md', swapped))).toEqual(['sections']);
  });

  describe('statuses', () => {
    for (const status of ['Rejected', 'Deprecated', 'accepted', 'Accepted-ish', 'Superseded', 'Superseded by', 'Superseded by ADR 3', 'Draft. Accepted later', '**Accepted**']) {
      it(`refuses the Status ${JSON.stringify(status)}`, () => {
        expect(rules(replace(validLog(), '0002-do-another-thing.md', adr(2, status)))).toEqual(['status']);
      });
    }

    it('refuses an ADR without a Status', () => {
      const text = adr(2, 'Accepted').replace('## Status\n\nAccepted\n\n', '');
      expect(rules(replace(validLog(), '0002-do-another-thing.md', text))).toEqual(['sections', 'status']);
    });

    it('accepts Proposed, Accepted and Superseded by in each spelling of the reference', () => {
      expect(rules(replace(validLog(), '0002-do-another-thing.md', adr(2, 'Proposed')))).toEqual([]);
      for (const by of ['Superseded by ADR 0003', 'Superseded by 0003', 'Superseded by [ADR 0003](0003-do-it-again.md).']) {
        expect(rules(replace(validLog(), '0001-record-decisions.md', adr(1, by)))).toEqual([]);
      }
    });
  });

  describe('"Superseded by NNNN"', () => {
    it('refuses a successor that does not exist', () => {
      const log = replace(validLog(), '0002-do-another-thing.md', adr(2, 'Superseded by ADR 0009'));
      expect(rules(log)).toEqual(['superseded-by']);
    });

    it('refuses a successor that does not say "Supersedes NNNN" back, or says it only partly', () => {
      const log = replace(validLog(), '0003-do-it-again.md', adr(3, 'Accepted. Supersedes part of [ADR 0001](0001-record-decisions.md): a sentence. Supersedes part of ADR 0002: its last consequence.'));
      const problems = checkAdrLog(log);
      expect(problems.map((p) => p.rule)).toEqual(['superseded-by']);
      expect(problems[0]!.message).toContain('does not say "Supersedes 0001"');
    });

    it('refuses an older ADR as the successor, and an ADR that supersedes itself', () => {
      const log = [
        { name: '0001-record-decisions.md', text: adr(1, 'Accepted. Supersedes ADR 0002.') },
        { name: '0002-do-another-thing.md', text: adr(2, 'Superseded by ADR 0001') },
      ];
      expect(rules(log)).toEqual(['supersedes', 'superseded-by']);
      const self = [{ name: '0001-record-decisions.md', text: adr(1, 'Superseded by ADR 0001. Supersedes ADR 0001.') }];
      expect(rules(self)).toEqual(['superseded-by', 'supersedes']);
    });

    it('refuses a link whose text names another ADR than its file', () => {
      const log = replace(validLog(), '0001-record-decisions.md', adr(1, 'Superseded by [ADR 0003](0002-do-another-thing.md)'));
      expect(rules(log)).toContain('link');
    });
  });

  describe('"Supersedes NNNN" as a whole', () => {
    const target = (status: string): AdrFile[] =>
      replace(replace(validLog(), '0001-record-decisions.md', adr(1, 'Accepted')), '0003-do-it-again.md', adr(3, `Accepted. ${status} Supersedes part of ADR 0002: x.`));

    for (const spelling of ['Supersedes [ADR 0001](0001-record-decisions.md).', 'Supersedes ADR 0001.', 'Supersedes 0001.', 'supersedes ADR 0001.', 'SUPERSEDES ADR 0001,', 'Supersedes\nADR 0001.']) {
      it(`refuses ${JSON.stringify(spelling)} while 0001 is still Accepted`, () => {
        const problems = checkAdrLog(target(spelling));
        expect(problems.map((p) => [p.rule, p.file])).toEqual([['supersedes', '0003-do-it-again.md']]);
        expect(problems[0]!.message).toContain('Supersedes part of 0001');
      });
    }

    it('sees every ADR of a list: "Supersedes ADR 0001 and ADR 0002" needs both marked', () => {
      const log = [
        { name: '0001-record-decisions.md', text: adr(1, 'Superseded by ADR 0003') },
        { name: '0002-do-another-thing.md', text: adr(2, 'Accepted') },
        { name: '0003-do-it-again.md', text: adr(3, 'Accepted. Supersedes ADR 0001 and ADR 0002.') },
      ];
      expect(checkAdrLog(log).map((p) => p.message)).toEqual([expect.stringContaining('"Supersedes 0002" as a whole')]);
      for (const list of ['ADR 0001, ADR 0002', '[ADR 0001](0001-record-decisions.md), and [ADR 0002](0002-do-another-thing.md)']) {
        const again = replace(log, '0003-do-it-again.md', adr(3, `Accepted. Supersedes ${list}.`));
        expect(rules(again)).toEqual(['supersedes']);
      }
    });

    it('refuses a target that does not exist or is marked superseded by another ADR', () => {
      expect(rules(target('Supersedes ADR 0008.'))).toEqual(['supersedes']);
      const log = [
        ...validLog(),
        { name: '0004-do-it-once-more.md', text: adr(4, 'Accepted. Supersedes ADR 0001.') },
      ];
      expect(checkAdrLog(log).map((p) => p.file)).toEqual(['0004-do-it-once-more.md']);
    });

    it('needs no status change for a partial supersession, however it is worded', () => {
      for (const partial of [
        'Supersedes part of [ADR 0002](0002-do-another-thing.md): its last consequence.',
        'Supersedes the parts of ADR 0002 that name the tier.',
        'Supersedes the last consequence of ADR 0002.',
        "Supersedes 0002's last consequence.",
      ]) {
        const log = replace(validLog(), '0003-do-it-again.md', adr(3, `Accepted. Supersedes ADR 0001. ${partial}`));
        expect(checkAdrLog(log)).toEqual([]);
      }
    });
  });

  describe('"Partly superseded by NNNN"', () => {
    it('refuses a successor that does not exist or whose Status does not name this ADR', () => {
      const missing = replace(validLog(), '0002-do-another-thing.md', adr(2, 'Accepted. Partly superseded by ADR 0007.'));
      expect(rules(missing)).toEqual(['partly-superseded-by']);
      const silent = replace(validLog(), '0003-do-it-again.md', adr(3, 'Accepted. Supersedes [ADR 0001](0001-record-decisions.md).'));
      expect(rules(silent)).toEqual(['partly-superseded-by']);
    });
  });

  it('refuses a link to an ADR file that does not exist, anywhere in the text', () => {
    const log = replace(validLog(), '0002-do-another-thing.md', adr(2, 'Accepted. Partly superseded by [ADR 0003](0003-do-it-again.md).', 'follow [ADR 0001](0001-record-decision.md#context)'));
    expect(checkAdrLog(log)).toEqual([expect.objectContaining({ rule: 'link', message: expect.stringContaining('0001-record-decision.md') })]);
  });
});
