#!/usr/bin/env node
// Each import below is paid by every invocation, so this file loads only
// what the invocation in hand uses: the module graph, not the verb, is most
// of a short verb's cost.

const argv = process.argv.slice(2);

if (
  !process.env.MU_TRACE_DIR &&
  argv.length === 1 &&
  (argv[0] === "--version" || argv[0] === "-V")
) {
  // The same line commander would print, without loading commander, and
  // through the same guard: a closed stdout is one line and exit 5.
  const { packageVersion } = await import("../package-root.js");
  const { exitAfterOutput, stdOutput } = await import("./std-output.js");
  const out = stdOutput(process.stdout);
  out.write(`${packageVersion()}\n`);
  process.exitCode = await exitAfterOutput(0, out, stdOutput(process.stderr));
} else {
  await runVerb();
}

async function runVerb(): Promise<void> {
  const { classify } = await import("../errors.js");
  try {
    const { runCli } = await import("./run.js");
    if (!process.env.MU_TRACE_DIR) {
      // exitCode, not exit(): let stdout drain before the process ends.
      process.exitCode = await runCli(argv);
      return;
    }
    const { realPorts } = await import("../ports/real.js");
    const { recordState, startTrace } = await import("../trace/start.js");
    const trace = startTrace(argv, process.env, (s) => process.stderr.write(s));
    const ports = trace?.ports(realPorts());
    process.exitCode = await runCli(argv, ports ? { ports } : {});
    if (trace && ports) await recordState(trace, ports);
  } catch (err) {
    // Even a bug in mu ends in one line, never a stack trace.
    const { exit, line } = classify(err);
    process.stderr.write(`${line}\n`);
    process.exitCode = exit;
  }
}
