import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";

// One real mu process, timed from spawn to exit, as a crew's orchestrator
// would run it: its own process, its own stdout, nothing shared but the
// state directory and the plugin's world.

export interface MuRun {
  verb: string;
  argv: string[];
  code: number | null;
  signal: string | null;
  ms: number;
  stdout: string;
  /** The first line mu printed on stderr: the one-line failure, if any. */
  line: string;
}

const MU = join(packageRoot(), "dist", "host", "cli", "mu.cjs");
/** The testbed's build, with the planted bugs in: a run whose environment names a plant needs it. */
const MU_TESTBED = join(packageRoot(), "dist", "sim", "runner", "mu-testbed.js");

/** The verb's name as the report groups it: "agent spawn", "wait", "host exec". */
export function verbOf(argv: readonly string[]): string {
  const [a, b] = argv;
  return a === "agent" || a === "host" || a === "plugin" ? `${a} ${b}` : (a ?? "");
}

export function runMu(
  argv: string[],
  env: Record<string, string>,
  killAfterMs: number,
  cwd?: string,
): Promise<MuRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [env.MU_TESTBED_PLANT ? MU_TESTBED : MU, ...argv], {
      env,
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    // A bound on the whole run, far past any verb's own deadlines: a mu that
    // outlives it is a hang the report must show, not a stress run that never ends.
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        verb: verbOf(argv),
        argv,
        code,
        signal,
        ms: performance.now() - started,
        stdout: Buffer.concat(out).toString("utf8"),
        line: Buffer.concat(err).toString("utf8").split("\n")[0] ?? "",
      });
    });
  });
}
