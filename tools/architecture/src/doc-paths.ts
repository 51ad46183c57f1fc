import path from 'node:path';

/** Fenced code blocks show commands and generated examples, not claims about the tree. */
function withoutFencedCode(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, '');
}

/** The top-level folders a cited repository path starts with. */
const REPO_PATH = /`((?:apps|libs|tools|docs|adrs)\/[A-Za-z0-9_./-]+)`/g;

/**
 * MCP and JSON-RPC method names that read like paths under `tools/` (`tools/list`, `tools/call`):
 * the docs of the MCP face name them, and no folder of `tools/` is called so.
 */
const MCP_METHOD = /^tools\/(?:list|call)$/;

/** Repository paths quoted inline (`libs/…`), outside fenced code, without a trailing slash. */
export function citedRepoPaths(markdown: string): string[] {
  return [...withoutFencedCode(markdown).matchAll(REPO_PATH)].map((m) => (m[1] as string).replace(/\/+$/, '')).filter((p) => !MCP_METHOD.test(p));
}

/**
 * Targets of relative Markdown links, resolved from `fromDir` (repository-relative). URLs,
 * same-page anchors and `NNNN` placeholders (the ADR template) are not files.
 */
export function relativeDocLinks(markdown: string, fromDir: string): string[] {
  const targets: string[] = [];
  for (const m of withoutFencedCode(markdown).matchAll(/\]\(([^)#\s]*)(?:#[^)]*)?\)/g)) {
    const target = m[1] as string;
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.includes('NNNN')) continue;
    targets.push(path.posix.normalize(path.posix.join(fromDir, target)));
  }
  return targets;
}

/** A test a document cites by file and name: `libs/x/test/y.spec.ts` › "a describe or it name". */
export interface CitedTest {
  readonly file: string;
  readonly name: string;
}

/** The tests cited as `` `file.spec.ts` › "name" ``, outside fenced code; line breaks count as spaces. */
export function citedTests(markdown: string): CitedTest[] {
  const text = withoutFencedCode(markdown).replace(/\s*\n\s*/g, ' ');
  return [...text.matchAll(/`((?:apps|libs|tools)\/[^`\s]+\.spec\.ts)`\s*›\s*"([^"]+)"/g)].map((m) => ({ file: m[1] as string, name: m[2] as string }));
}
