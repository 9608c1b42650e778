import { classify } from "../errors.js";
import { rawArgs } from "../ports/raw-argv.js";
import { sqlJs } from "../store/sqljs.js";
import { checkArgsUtf8 } from "./argv-utf8.js";
import { runCli } from "./run.js";

// The bin's body for every verb: main.ts loads it (as one bundled file
// after a build) once it knows the invocation is not --version. The trace's
// modules load only when MU_TRACE_DIR asks for one.

export async function runVerb(argv: string[]): Promise<void> {
  // sql.js compiles its wasm off the main thread: started here, the compile
  // overlaps with building the program and loading the verb. A failure is
  // met again, and reported, by the verb that opens the store.
  if (!onlyHelp(argv)) sqlJs().catch(() => {});
  try {
    checkArgsUtf8(argv, rawArgs(argv.length));
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

/** Help and version never open the store, so they never pay for its start. */
function onlyHelp(argv: readonly string[]): boolean {
  return (
    argv.length === 0 ||
    argv[0] === "help" ||
    argv.some((a) => a === "-h" || a === "--help" || a === "-V" || a === "--version")
  );
}
