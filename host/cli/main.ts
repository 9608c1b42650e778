#!/usr/bin/env node
import { runCli } from "./run.js";

// exitCode, not exit(): let stdout drain before the process ends.
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mu: internal: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 5;
  },
);
