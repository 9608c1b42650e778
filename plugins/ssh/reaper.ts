// The remote side's hold on a run's processes. A script that starts a
// process in a session of its own with a cleared environment leaves both the
// run's process group and its marker; only ancestry still ties it to the
// run, and only while no orphan is handed to init. So, where the remote has
// python3 (its ctypes needs no compiler and no privilege), each run starts
// under this launcher: it makes itself a child subreaper (Linux 3.4+), so
// every orphan of the run is re-parented to it, and on SIGUSR1 it kills its
// whole tree until it holds nothing, then writes `reaped`.
//
// argv: the run's directory, then the command. It writes `pid` (the script's
// process group) and `reaper` (its own pid, only once it holds the tree).

const PR_SET_CHILD_SUBREAPER = 36;

export const LAUNCH = `
import ctypes, os, signal, sys, time
d, argv = sys.argv[1], sys.argv[2:]
class Stop(Exception):
    pass
def stop(*_):
    raise Stop()
signal.signal(signal.SIGUSR1, stop)
held = ctypes.CDLL(None, use_errno=True).prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0
def put(name, text):
    with open(d + '/' + name + '.tmp', 'w') as f:
        f.write(text + '\\n')
    os.rename(d + '/' + name + '.tmp', d + '/' + name)
me = os.getpid()
def tree():
    kids = {}
    for e in os.listdir('/proc'):
        try:
            s = open('/proc/%s/stat' % e).read() if e.isdigit() else ''
        except OSError:
            continue
        if s:
            kids.setdefault(int(s[s.rfind(')') + 2:].split(' ')[1]), []).append(int(e))
    out, todo = [], [me]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out
def killall():
    while True:
        for p in tree():
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.02)
try:
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        # Python starts with SIGPIPE and SIGXFSZ ignored, and an exec keeps
        # what is ignored: the run gets the defaults any shell would give it.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        os.setsid()
        try:
            os.execvp(argv[0], argv)
        except OSError:
            os._exit(127)
    put('pid', str(pid))
    put('reaper' if held else 'unheld', str(me))
    status = 0
    while True:
        p, st = os.waitpid(-1, 0)
        if p == pid:
            status = st
            break
except Stop:
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    killall()
    put('reaped', str(me))
    os._exit(137)
# As sh reports a child a signal ended: 128 plus the signal.
os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
`;

/** A probe the reach check runs: exits 0 only where the launcher can hold a run. */
export const PROBE = `import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) != 0)`;
