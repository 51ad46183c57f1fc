// Sums the JSON reports every project's vitest run leaves in .test-results/ into one closing
// line, `N passed, N failed, N skipped`, and fails when a project ran no test at all: a suite
// that silently finds nothing must not pass. `--clean` empties the directory before a run.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../.test-results/', import.meta.url));
if (process.argv.includes('--clean')) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.exit(0);
}

let passed = 0;
let failed = 0;
let skipped = 0;
const empty = [];
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
for (const file of files) {
  const report = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  if (report.numPassedTests + report.numFailedTests === 0) empty.push(file.replace(/\.json$/, ''));
}
console.log(`\ntest projects: ${files.length}`);
if (empty.length > 0) console.log(`projects that ran no test: ${empty.join(', ')}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
if (files.length === 0 || failed > 0 || empty.length > 0) process.exitCode = 1;
