import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatLine, formatSummary, type BenchLine, type TargetCheck } from './targets.js';

/**
 * `npm run bench`: runs every `*.bench.ts` beside this file, one after another in this process,
 * and prints what each measured. Each bench compares against its own baseline in the same run,
 * so the printed ratios hold on a shared, noisy machine where absolute numbers do not.
 * `npm run bench -- audit http` runs only the named ones. A missed target is printed `MISSED`
 * and counted in the closing line, but does not make the run fail: only a bench that throws does.
 */
async function main(): Promise<void> {
  const dir = fileURLToPath(new URL('.', import.meta.url));
  const only = process.argv.slice(2);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts')).sort();
  const selected = files.filter((f) => only.length === 0 || only.includes(basename(f, '.bench.ts')));
  if (selected.length === 0) throw new Error(`no bench named ${only.join(', ')}; have ${files.map((f) => basename(f, '.bench.ts')).join(', ')}`);
  const failed: string[] = [];
  const checks: { bench: string; check: TargetCheck }[] = [];
  for (const file of selected) {
    const name = basename(file, '.bench.ts');
    process.stdout.write(`\n== ${name}\n`);
    const started = Date.now();
    try {
      const module = (await import(pathToFileURL(`${dir}/${file}`).href)) as { bench: () => Promise<BenchLine[]> };
      for (const line of await module.bench()) {
        if (typeof line !== 'string') checks.push({ bench: name, check: line });
        process.stdout.write(`${formatLine(line)}\n`);
      }
    } catch (error) {
      failed.push(name);
      process.stdout.write(`FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.stdout.write(`(${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  process.stdout.write(`\n${formatSummary(checks, failed)}\n`);
  if (failed.length > 0) process.exitCode = 1;
}

void main();
