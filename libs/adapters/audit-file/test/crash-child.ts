// Run by file-audit-sink.crash.spec.ts with tsx: appends under load until it is SIGKILLed,
// printing every acknowledged receipt. stdout is a pipe, which Node writes synchronously, so a
// printed line was acknowledged before the kill.
import { FileAuditSink } from '../src/index.js';

const [dir, segmentBytes, writers] = process.argv.slice(2);
try {
  const sink = await FileAuditSink.open(dir as string, { segmentBytes: Number(segmentBytes) });
  process.stdout.write(`ready ${process.pid}\n`);
  let n = 0;
  const worker = async (w: number): Promise<void> => {
    for (;;) {
      const i = n++;
      const receipt = await sink.append({
        event: i % 5 === 0 ? 'denied' : 'authorized',
        ts: new Date().toISOString(),
        tenant: 'acme',
        principal: `w${w}`,
        tool: 'crash_test',
        version: '1.0.0',
        callId: `${process.pid}-${i}`,
        // Varying sizes, so kills land at every offset inside frames and batches.
        detail: 'x'.repeat((i * 37) % 300),
      });
      process.stdout.write(`ack ${receipt.seq} ${receipt.digest}\n`);
    }
  };
  for (let w = 0; w < Number(writers); w++) void worker(w);
} catch (error) {
  process.stdout.write(`error ${(error as Error).message}\n`);
  process.exit(1);
}
