// Sums the JSON reports every project's vitest run leaves in .test-results/ into one closing
// line, `N passed, N failed, N skipped`, and fails when a project ran no test at all: a suite
// that silently finds nothing must not pass. `--clean` empties the directory before a run.
//
// It runs after `nx run-many` whether that passed or not, and names what failed last, so the
// tail of a CI log (often all that is kept) says which test failed and why: each failing test
// with the start of its message, each test file that failed outside a test (an import error, an
// error in a hook), each error raised outside any test, and each project whose run failed with
// no failing test and no error kept (a worker that died, say), whose cause is then in that
// project's own output above.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../.test-results/', import.meta.url));
if (process.argv.includes('--clean')) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.exit(0);
}

/** The first lines of a failure message, without colour codes: enough to tell one failure from another. */
function brief(message) {
  // eslint-disable-next-line no-control-regex -- colour codes start with the escape character
  const plain = String(message).replace(/\x1b\[[0-9;]*m/g, '');
  const lines = plain.split('\n').filter((line) => line.trim() !== '').slice(0, 6);
  return lines.map((line) => `      ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`).join('\n');
}

let passed = 0;
let failed = 0;
let skipped = 0;
const empty = [];
const failures = [];
const unexplained = [];
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
for (const file of files) {
  const project = file.replace(/\.json$/, '');
  const report = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  if (report.numPassedTests + report.numFailedTests === 0) empty.push(project);
  let explained = false;
  for (const suite of report.testResults ?? []) {
    const where = String(suite.name ?? '').replace(/^.*?\/(apps|libs|tools)\//, '$1/');
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      explained = true;
      failures.push(`  ${project}: ${where} > ${test.fullName}\n${brief((test.failureMessages ?? []).join('\n'))}`);
    }
    if (suite.status === 'failed' && suite.message) {
      explained = true;
      failures.push(`  ${project}: ${where} (outside any test)\n${brief(suite.message)}`);
    }
  }
  // vitest.shared.ts keeps the errors raised outside any test beside the report.
  const unhandledFile = `${dir}${project}.unhandled`;
  const unhandled = existsSync(unhandledFile) ? JSON.parse(readFileSync(unhandledFile, 'utf8')) : [];
  for (const error of unhandled) {
    explained = true;
    failures.push(`  ${project}: an error outside any test\n${brief(error.stack.includes(error.message) ? error.stack : `${error.name}: ${error.message}\n${error.stack}`)}`);
  }
  if (report.success === false && !explained) unexplained.push(project);
}
console.log(`\ntest projects: ${files.length}`);
if (failures.length > 0) console.log(`failed:\n${failures.join('\n')}`);
if (unexplained.length > 0) {
  console.log(`projects whose run failed with every test passing and no error kept (a worker that died? see their output): ${unexplained.join(', ')}`);
}
if (empty.length > 0) console.log(`projects that ran no test: ${empty.join(', ')}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
if (files.length === 0 || failed > 0 || empty.length > 0 || unexplained.length > 0 || failures.length > 0) process.exitCode = 1;
