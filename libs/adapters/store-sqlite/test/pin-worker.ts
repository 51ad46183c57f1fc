/**
 * One "server process" for the cross-process pin tests: opens the state file, prints `ready`,
 * waits for `go <epoch ms>` on stdin, then for each round waits for that round's tick (the same
 * wall-clock moment in every worker, so the processes contend in every round however slowly each
 * booted), pins `first_<round>` with a definition of its own, accepts a change of
 * `accept_<round>` from the digest the test pinned, and prints what it saw.
 *
 * Usage: node --import tsx pin-worker.ts <db> <worker> <rounds> <tickMs> <expectedDigest>
 */
import { hash } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolPin } from '@toolgate/contracts';
import { openSqliteStores } from '../src/index.js';

const [path, worker, roundsText, tickText, expectedDigest] = process.argv.slice(2);
if (!path || !worker || !roundsText || !tickText || !expectedDigest) {
  process.stderr.write('usage: pin-worker <db> <worker> <rounds> <tickMs> <expectedDigest>\n');
  process.exit(2);
}

/** The pin this worker offers for `tool`: keys in sorted order, so the JSON is canonical. */
function pinOf(tool: string): ToolPin {
  const definition = JSON.stringify({ description: `offered by worker ${worker}`, name: tool });
  return { tool, provenance: 'mcp:race', digest: `sha256:${hash('sha256', definition, 'hex')}`, definition, pinnedAt: Date.now(), pinnedBy: `worker-${worker}` };
}

const stores = openSqliteStores(path);
process.stdout.write('ready\n');
const [go] = (await once(process.stdin, 'data')) as [Buffer];
const start = Number(go.toString().split(' ')[1]);
const firsts: string[] = [];
const won: boolean[] = [];
for (let round = 0; round < Number(roundsText); round++) {
  await sleep(Math.max(0, start + round * Number(tickText) - Date.now()));
  firsts.push((await stores.pins.pinFirst(pinOf(`first_${round}`))).pinnedBy);
  won.push(await stores.pins.replace(expectedDigest, pinOf(`accept_${round}`)));
}
await stores.close();
process.stdout.write(`${JSON.stringify({ firsts, won })}\n`);
process.exit(0);
