import type { ExitCode } from "../errors.js";
import { realPorts } from "../ports/real.js";
import type { Ports } from "../ports/types.js";
import type { Io } from "./io.js";
import { runProgram } from "./program.js";
import { exitAfterOutput, stdOutput } from "./std-output.js";

export interface RunOptions {
  ports?: Ports;
  out?: (s: string) => void;
  err?: (s: string) => void;
}

/** Runs mu in this process: the bin's body, and the fast tier's way in. */
export async function runCli(argv: string[], opts: RunOptions = {}): Promise<ExitCode> {
  const ports = opts.ports ?? realPorts();
  if (opts.out && opts.err) return runProgram({ ports, out: opts.out, err: opts.err }, argv);
  const stdout = stdOutput(process.stdout);
  const stderr = stdOutput(process.stderr);
  const io: Io = {
    ports,
    out: opts.out ?? ((s) => stdout.write(s)),
    err: opts.err ?? ((s) => stderr.write(s)),
  };
  return exitAfterOutput(await runProgram(io, argv), stdout, stderr);
}
