#!/usr/bin/env node
import { classify } from "../errors.js";
import { realPorts } from "../ports/real.js";
import { recordState, startTrace } from "../trace/start.js";
import { runCli } from "./run.js";

const argv = process.argv.slice(2);
const trace = startTrace(argv, process.env, (s) => process.stderr.write(s));
const ports = trace?.ports(realPorts());

// exitCode, not exit(): let stdout drain before the process ends.
runCli(argv, ports ? { ports } : {}).then(
  async (code) => {
    process.exitCode = code;
    if (trace && ports) await recordState(trace, ports);
  },
  (err: unknown) => {
    // Even a bug in mu ends in one line, never a stack trace.
    const { exit, line } = classify(err);
    process.stderr.write(`${line}\n`);
    process.exitCode = exit;
  },
);
