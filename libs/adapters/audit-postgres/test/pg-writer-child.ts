// Run by pg-audit-sink.spec.ts with tsx: a second server process appending to the same chain.
import { createInterface } from 'node:readline';
import type { AuditReceipt } from '@toolgate/contracts';
import { PgAuditSink } from '../src/index.js';

const [url, workers, each] = process.argv.slice(2);
const sink = await PgAuditSink.open(url as string);
process.stdout.write('ready\n');
// The parent's lines, read from one iterator (breaking out of a for-await would close stdin).
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const until = async (word: string) => {
  for (let next = await lines.next(); !next.done; next = await lines.next()) if (next.value === word) return;
  throw new Error(`stdin closed before "${word}"`);
};
const append = (w: number, i: number) =>
  sink.append({ event: 'authorized', ts: new Date().toISOString(), tenant: 'acme', principal: 'child', tool: 't', version: '1', callId: `child-${w}-${i}` });
// The two processes' records must interleave whatever the box's load: the child appends one,
// the parent one after it ("more" comes once the parent's is acknowledged), then both the rest
// at once.
await until('go');
const receipts: AuditReceipt[] = [await append(0, 0)];
process.stdout.write('first\n');
await until('more');
await Promise.all(
  Array.from({ length: Number(workers) }, async (_, w) => {
    for (let i = w === 0 ? 1 : 0; i < Number(each); i++) receipts.push(await append(w, i));
  }),
);
await sink.close();
process.stdout.write(`${JSON.stringify(receipts)}\n`);
