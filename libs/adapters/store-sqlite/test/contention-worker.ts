/**
 * One "server process" for the cross-process tests: opens the state file, waits for a shared
 * start time so all workers contend at once, then charges a budget or consumes an approval
 * `attempts` times and prints how many succeeded as JSON.
 *
 * Usage: node --import tsx contention-worker.ts <db> <charge|consume> <attempts> <startAt> <calls|approvalId>
 */
import { openSqliteStores } from '../src/index.js';

const [path, mode, attemptsText, startAtText, target] = process.argv.slice(2);
if (!path || (mode !== 'charge' && mode !== 'consume') || !attemptsText || !startAtText || !target) {
  process.stderr.write('usage: contention-worker <db> <charge|consume> <attempts> <startAt> <calls|approvalId>\n');
  process.exit(2);
}
const attempts = Number(attemptsText);
const stores = openSqliteStores(path);
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAtText) - Date.now())));
let succeeded = 0;
for (let i = 0; i < attempts; i++) {
  const now = Date.UTC(2030, 0, 1, 12);
  if (mode === 'charge') {
    if (await stores.budgets.charge('tenant', 'alice', { calls: Number(target), windowSeconds: 3600 }, now)) succeeded++;
  } else {
    const outcome = await stores.approvals.consume('tenant', target, 'sha256:digest', now);
    if (outcome.ok) succeeded++;
  }
}
await stores.close();
process.stdout.write(JSON.stringify({ succeeded }));
