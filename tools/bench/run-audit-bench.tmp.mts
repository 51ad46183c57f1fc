import { bench } from '/work/main/tools/bench/src/audit.bench.ts';
for (const line of await bench()) console.log(line);
