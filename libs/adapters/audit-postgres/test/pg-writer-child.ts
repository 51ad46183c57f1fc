// Run by pg-audit-sink.spec.ts with tsx: a second server process appending to the same chain.
import { createInterface } from 'node:readline';
import type { AuditReceipt } from '@toolgate/contracts';
import { PgAuditSink } from '../src/index.js';

const [url, workers, each] = process.argv.slice(2);
const sink = await PgAuditSink.open(url as string);
process.stdout.write('ready\n');
// Start together with the parent (it writes "go"), so the two processes really interleave.
for await (const line of createInterface({ input: process.stdin })) if (line === 'go') break;
const receipts: AuditReceipt[] = [];
await Promise.all(
  Array.from({ length: Number(workers) }, async (_, w) => {
    for (let i = 0; i < Number(each); i++) {
      receipts.push(
        await sink.append({ event: 'authorized', ts: new Date().toISOString(), tenant: 'acme', principal: 'child', tool: 't', version: '1', callId: `child-${w}-${i}` }),
      );
    }
  }),
);
await sink.close();
process.stdout.write(`${JSON.stringify(receipts)}\n`);
