#!/usr/bin/env node
import { classify } from "../errors.js";
import { runCli } from "./run.js";

// exitCode, not exit(): let stdout drain before the process ends.
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Even a bug in mu ends in one line, never a stack trace.
    const { exit, line } = classify(err);
    process.stderr.write(`${line}\n`);
    process.exitCode = exit;
  },
);
