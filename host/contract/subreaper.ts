import { spawnSync } from "node:child_process";

// The suite runs each plugin start under a child subreaper
// (PR_SET_CHILD_SUBREAPER, Linux 3.4+), set by python3 just before it execs
// the plugin; the attribute survives exec. A helper that double-forks or
// daemonizes is then re-parented to the plugin instead of to PID 1, so the
// suite finds it by ancestry even when it blanked its environment (as an
// ssh ControlPersist master does). python3's ctypes needs no compiler and
// no privilege; mu's own runs never use this.

const PR_SET_CHILD_SUBREAPER = 36;

const LAUNCH = [
  "import ctypes, os, sys",
  `ctypes.CDLL(None, use_errno=True).prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0)`,
  "try:",
  "    os.execv(sys.argv[1], sys.argv[1:])",
  "except OSError as e:",
  "    sys.stderr.write('mu check launcher: cannot run %s: %s\\n' % (sys.argv[1], e.strerror))",
  "    sys.exit(127)",
].join("\n");

/** Sets the attribute, reads it back, and names the interpreter, so a start pays no shim. */
const PROBE = [
  "import ctypes, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  `assert libc.prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0`,
  "v = ctypes.c_int(0)",
  `assert libc.prctl(${PR_SET_CHILD_SUBREAPER + 1}, ctypes.byref(v), 0, 0, 0) == 0 and v.value == 1`,
  "print(sys.executable)",
].join("\n");

/** The argv prefix that runs a plugin as a subreaper, or why there is none here. */
export function subreaperLauncher(
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[] } | { why: string } {
  if (process.platform !== "linux") return { why: "not Linux" };
  const r = spawnSync("python3", ["-I", "-S", "-c", PROBE], {
    encoding: "utf8",
    env: env as NodeJS.ProcessEnv,
    timeout: 10_000,
  });
  const exe = r.stdout?.trim() ?? "";
  if (r.status !== 0 || !exe.startsWith("/"))
    return { why: r.error ? "python3 not found" : "python3 could not set a child subreaper" };
  return { argv: [exe, "-I", "-S", "-c", LAUNCH] };
}
