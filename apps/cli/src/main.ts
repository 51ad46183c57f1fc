import { runCli } from './cli.js';

runCli(process.argv.slice(2), { env: process.env, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), stdio: { stdin: process.stdin, stdout: process.stdout } }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`toolgate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
