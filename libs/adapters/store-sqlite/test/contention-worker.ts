/**
 * One "server process" for the cross-process tests: opens the state file, prints `ready`, waits
 * for `go` on stdin (so every worker contends at the same moment however slowly each booted),
 * then charges a budget or consumes an approval `attempts` times and prints how many succeeded.
 *
 * Usage: node --import tsx contention-worker.ts <db> <charge|consume> <attempts> <calls|approvalId>
 */
import { once } from 'node:events';
import { openSqliteStores } from '../src/index.js';

const [path, mode, attemptsText, target] = process.argv.slice(2);
if (!path || (mode !== 'charge' && mode !== 'consume') || !attemptsText || !target) {
  process.stderr.write('usage: contention-worker <db> <charge|consume> <attempts> <calls|approvalId>\n');
  process.exit(2);
}
const attempts = Number(attemptsText);
const now = Date.UTC(2030, 0, 1, 12);
const stores = openSqliteStores(path);
process.stdout.write('ready\n');
await once(process.stdin, 'data');
let succeeded = 0;
for (let i = 0; i < attempts; i++) {
  if (mode === 'charge') {
    if (await stores.budgets.charge('tenant', 'alice', { calls: Number(target), windowSeconds: 3600 }, now)) succeeded++;
  } else if ((await stores.approvals.consume('tenant', target, 'sha256:digest', now)).ok) {
    succeeded++;
  }
}
await stores.close();
process.stdout.write(`${JSON.stringify({ succeeded })}\n`);
process.exit(0);
