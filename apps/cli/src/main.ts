/** The `weir` command line: `npm run cli -- <command> [options]`. */
import { runCli } from './run-cli';

runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`weir: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
