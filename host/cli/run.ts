import type { ExitCode } from "../errors.js";
import { realPorts } from "../ports/real.js";
import type { Ports } from "../ports/types.js";
import type { Io } from "./io.js";
import { runProgram } from "./program.js";

export interface RunOptions {
  ports?: Ports;
  out?: (s: string) => void;
  err?: (s: string) => void;
}

/** Runs mu in this process: the bin's body, and the fast tier's way in. */
// async: a bad environment found while building the ports (a malformed
// MU_CLOCK_OFFSET_MS) rejects, so the caller prints it as one line.
export async function runCli(argv: string[], opts: RunOptions = {}): Promise<ExitCode> {
  const io: Io = {
    ports: opts.ports ?? realPorts(),
    out: opts.out ?? ((s) => process.stdout.write(s)),
    err: opts.err ?? ((s) => process.stderr.write(s)),
  };
  return runProgram(io, argv);
}
