/**
 * One "server process" for the cross-process tests: opens the state file, prints `ready`, waits
 * for `go` on stdin (so every worker contends at the same moment however slowly each booted),
 * then tries to charge a budget and to consume an approval, and prints how often each succeeded.
 *
 * Usage: node --import tsx contention-worker.ts <db> <charges> <calls> <consumes> <approvalId>
 */
import { once } from 'node:events';
import { openSqliteStores } from '../src/index.js';

const [path, chargesText, callsText, consumesText, approvalId] = process.argv.slice(2);
if (!path || !chargesText || !callsText || !consumesText || !approvalId) {
  process.stderr.write('usage: contention-worker <db> <charges> <calls> <consumes> <approvalId>\n');
  process.exit(2);
}
const now = Date.UTC(2030, 0, 1, 12);
const policy = { calls: Number(callsText), windowSeconds: 3600 };
const stores = openSqliteStores(path);
process.stdout.write('ready\n');
await once(process.stdin, 'data');
let charged = 0;
let consumed = 0;
// Interleave the two so both contend for the whole run.
for (let i = 0; i < Math.max(Number(chargesText), Number(consumesText)); i++) {
  if (i < Number(chargesText) && (await stores.budgets.charge('tenant', 'alice', policy, now))) charged++;
  if (i < Number(consumesText) && (await stores.approvals.consume('tenant', approvalId, 'sha256:digest', now)).ok) consumed++;
}
await stores.close();
process.stdout.write(`${JSON.stringify({ charged, consumed })}\n`);
process.exit(0);
