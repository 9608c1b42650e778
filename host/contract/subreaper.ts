import { spawnSync } from "node:child_process";

// The suite runs each plugin start under a small launcher: python3 sets
// PR_SET_CHILD_SUBREAPER (Linux 3.4+) on itself, forks, and the child execs
// the plugin. A helper that double-forks or daemonizes is then re-parented
// to the launcher instead of to PID 1, so the suite finds it by ancestry
// even when it blanked its environment (as an ssh ControlPersist master
// does); and when the plugin ends, the launcher writes down every process
// it still holds before it exits with the plugin's status. python3's ctypes
// needs no compiler and no privilege; mu's own runs never use this.

const PR_SET_CHILD_SUBREAPER = 36;

const LAUNCH = `
import ctypes, os, signal, sys
report, argv = sys.argv[1], sys.argv[2:]
ctypes.CDLL(None, use_errno=True).prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0)
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        sys.stderr.write('mu check launcher: cannot run %s: %s\\n' % (argv[0], e.strerror))
        os._exit(127)
# The plugin owns the pipes and the signals sent to the group; the launcher
# only waits, so that it outlives the plugin long enough to report.
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
null = os.open('/dev/null', os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
status = 0
while True:
    try:
        p, st = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if p == pid:
        status = st
        break
me, held = str(os.getpid()), []
for e in os.listdir('/proc'):
    try:
        stat = open('/proc/%s/stat' % e).read() if e.isdigit() else ''
    except OSError:
        continue
    f = stat[stat.rfind(')') + 2:].split(' ')
    if len(f) > 19 and f[1] == me and f[0] != 'Z':
        held.append('%s %s\\n' % (e, f[19]))
with open(report, 'a') as out:
    out.write(''.join(held))
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
`;

/** Sets the attribute, reads it back, and names the interpreter, so a start pays no shim. */
const PROBE = [
  "import ctypes, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  `assert libc.prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0`,
  "v = ctypes.c_int(0)",
  `assert libc.prctl(${PR_SET_CHILD_SUBREAPER + 1}, ctypes.byref(v), 0, 0, 0) == 0 and v.value == 1`,
  "print(sys.executable)",
].join("\n");

/** Given a start's report file, the argv prefix that runs the plugin under the launcher. */
export type Launcher = (report: string) => string[];

/** The launcher, or why there is none here. */
export function subreaperLauncher(
  env: Readonly<Record<string, string | undefined>>,
): { launch: Launcher } | { why: string } {
  if (process.platform !== "linux") return { why: "not Linux" };
  const r = spawnSync("python3", ["-I", "-S", "-c", PROBE], {
    encoding: "utf8",
    env: env as NodeJS.ProcessEnv,
    timeout: 10_000,
  });
  const exe = r.stdout?.trim() ?? "";
  if (r.status !== 0 || !exe.startsWith("/"))
    return { why: r.error ? "python3 not found" : "python3 could not set a child subreaper" };
  return { launch: (report) => [exe, "-I", "-S", "-c", LAUNCH, report] };
}
