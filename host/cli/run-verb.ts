import { classify } from "../errors.js";
import { runCli } from "./run.js";

// The bin's body for every verb: main.ts loads it (as one bundled file
// after a build) once it knows the invocation is not --version. The trace's
// modules load only when MU_TRACE_DIR asks for one.

export async function runVerb(argv: string[]): Promise<void> {
  try {
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
