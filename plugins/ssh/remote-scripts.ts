// The POSIX sh the plugin runs on the remote. Each takes its inputs as
// positional arguments; nothing is interpolated into the code itself.

/** Where the plugin's own files live, relative to the remote root. */
export const STATE = ".mu-plugin-ssh";

/**
 * Sets $py to the python3 the launcher runs under, or empty when PATH has
 * none: the system's own when it has one, else PATH's. The launcher needs
 * only the standard library, and a version manager's shim on PATH (pyenv,
 * asdf) costs some 100 ms a run.
 */
const PY = `py=$(command -v python3 2>/dev/null) || py=; [ -n "$py" ] && [ -x /usr/bin/python3 ] && py=/usr/bin/python3`;

/**
 * Hands the run to perl-run.ts's one-process wrapper ($7) where PATH has
 * perl: the system's own, as for python3 (a version manager's shim is
 * slow). Nothing has been read from stdin yet.
 */
const PERL_FIRST = `if [ -n "$7" ] && command -v perl >/dev/null 2>&1; then
  if [ -x /usr/bin/perl ]; then exec /usr/bin/perl -e "$7" -- "$@"; fi
  exec perl -e "$7" -- "$@"
fi`;

/**
 * Runs one link.exec: $1 root, $2 byte count, $3 run id, $4 cwd, $5 output
 * cap, $6 the launcher (reaper.ts), $7 perl-run.ts's wrapper (optional).
 * The script arrives on stdin and runs only if every byte came. Its output
 * goes to files, so the wrapper's own stdout is only the framing: a script
 * exiting 255 cannot pass for ssh failing. Without perl or python3 the
 * script runs in a group of its own, unheld.
 */
export const EXEC = `
root=$1 n=$2 id=$3 cwd=$4 lim=$5 launch=$6
${PERL_FIRST}
cd -- "$root" || { echo "MU-SSH-NOROOT $id"; exit 0; }
mkdir -p "${STATE}/runs/$id" || { echo "MU-SSH-NOWRITE $id"; exit 0; }
# Forks are most of a short run's cost on the remote: $PWD and $((…)) stand
# in for a subshell, and tr for wc's padding, where they can.
d=$PWD/${STATE}/runs/$id
head -c "$n" > "$d/script"
got=$(($(wc -c < "$d/script")))
if [ "$got" != "$n" ]; then rm -rf "$d"; echo "MU-SSH-SHORT $id $got"; exit 0; fi
if ! cd -- "$cwd" 2>/dev/null; then rm -rf "$d"; echo "MU-SSH-NOCWD $id"; exit 0; fi
# A caller gone before the start (its ssh killed, the session begun late):
# the write fails instead of killing this shell, which then cleans up and
# stops. The script itself starts with SIGPIPE at its default again.
trap '' PIPE
echo "MU-SSH-STARTED $id" || { rm -rf "$d"; exit 0; }
trap - PIPE
${PY}
if [ -n "$py" ]; then
  MU_SSH_RUN=$id "$py" -I -S -c "$launch" "$d" sh "$d/script" </dev/null >"$d/out" 2>"$d/err" &
else
  : > "$d/unheld"
  MU_SSH_RUN=$id setsid sh "$d/script" </dev/null >"$d/out" 2>"$d/err" &
  echo $! > "$d/pid"
fi
wait $!
code=$?
# A caller gone by now still gets its run directory removed.
trap '' PIPE
o=0 e=0
[ -s "$d/out" ] && o=$(($(wc -c < "$d/out")))
[ -s "$d/err" ] && e=$(($(wc -c < "$d/err")))
printf 'MU-SSH-RESULT %s %s %s %s\\n' "$id" "$code" "$o" "$e"
[ "$o" = 0 ] || head -c "$lim" "$d/out"
[ "$e" = 0 ] || head -c "$lim" "$d/err"
rm -rf "$d"
`;

/**
 * Kills one run's whole tree: $1 root, $2 run id, $3 output cap. The
 * launcher that holds the run kills every process it holds; then the group
 * and anything still carrying the run's marker in its environment, until
 * none is left. Prints the output so far in the same framing, code "-", or
 * "?" for a run no launcher held (a process that left both group and marker
 * may be left).
 */
export const KILL = `
root=$1 id=$2 lim=$3
cd -- "$root" 2>/dev/null || exit 0
d=${STATE}/runs/$id
r=$(cat "$d/reaper" 2>/dev/null)
if [ -n "$r" ] && grep -qzx "MU_SSH_RUN=$id" "/proc/$r/environ" 2>/dev/null && kill -USR1 "$r" 2>/dev/null; then
  i=0
  until [ -e "$d/reaped" ] || ! kill -0 "$r" 2>/dev/null; do
    i=$((i+1)); [ "$i" -gt 200 ] && { echo "MU-SSH-KILL-FAILED $id"; exit 0; }
    sleep 0.05
  done
fi
held=-
[ -e "$d/unheld" ] && held=?
pg=$(cat "$d/pid" 2>/dev/null)
i=0
while :; do
  [ -n "$pg" ] && kill -KILL "-$pg" 2>/dev/null
  left=
  # One grep over every environment (-z: records end in NUL), not a fork per process.
  for e in $(grep -lzx "MU_SSH_RUN=$id" /proc/[0-9]*/environ 2>/dev/null); do
    p=\${e#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null; left=1
  done
  [ -z "$left" ] && break
  i=$((i+1)); [ "$i" -gt 100 ] && { echo "MU-SSH-KILL-FAILED $id"; exit 0; }
  sleep 0.1
done
if [ -d "$d" ]; then
  # A run killed before its launcher made out or err counts that stream as empty.
  printf 'MU-SSH-RESULT %s %s %s %s\\n' "$id" "$held" "$(cat "$d/out" 2>/dev/null | wc -c | tr -d ' ')" "$(cat "$d/err" 2>/dev/null | wc -c | tr -d ' ')"
  head -c "$lim" "$d/out" 2>/dev/null
  head -c "$lim" "$d/err" 2>/dev/null
  rm -rf "$d"
else
  printf 'MU-SSH-RESULT %s %s 0 0\\n' "$id" "$held"
fi
`;

/**
 * Makes $2 (under root $1) a repository if it is none. When it already holds
 * commit $3 it finishes there (PUSH_FINISH's checkout) and says HAS, so a
 * push of a commit the remote has is one session; else it says whether HEAD
 * is born, so a push into a repository with a HEAD needs no finishing session.
 */
export const PUSH_PREP = `
root=$1 repo=$2 rev=$3
cd -- "$root" 2>/dev/null || exit 5
mkdir -p -- "$repo" && cd -- "$repo" || exit 3
if ! { test -e .git || { test -f HEAD && test -d objects; }; }; then git init -q || exit 6; fi
if git cat-file -e "$rev^{commit}" 2>/dev/null; then
  git rev-parse -q --verify HEAD >/dev/null || [ "$(git rev-parse --is-bare-repository)" = true ] || git -c advice.detachedHead=false checkout -q --detach "$rev" || exit 4
  echo MU-SSH-HAS
elif git rev-parse -q --verify HEAD >/dev/null; then
  echo MU-SSH-BORN
fi
exit 0
`;

/** A repository whose HEAD is unborn gets rev checked out, detached, so it has a HEAD to fetch and branch from (a bare one has no tree to check out into, and keeps the ref alone). */
export const PUSH_FINISH = `
root=$1 repo=$2 rev=$3
cd -- "$root" 2>/dev/null || exit 5
cd -- "$repo" || exit 3
git cat-file -e "$rev^{commit}" || exit 4
git rev-parse -q --verify HEAD >/dev/null || [ "$(git rev-parse --is-bare-repository)" = true ] || git -c advice.detachedHead=false checkout -q --detach "$rev"
`;

/** The reach phase: sh, git, a writable root, and what killing a run's tree needs ($3 and $4: the python3 and perl probes). */
export const REACH = `
root=$1 repo=$2
command -v git >/dev/null 2>&1 && echo MU-SSH-GIT
[ -n "$repo" ] && (cd -- "$root" && cd -- "$repo" 2>/dev/null && git rev-parse --git-dir >/dev/null 2>&1) && echo MU-SSH-REPO
command -v setsid >/dev/null 2>&1 && test -r /proc/self/environ && printf 'A=1\\0' | grep -qzx A=1 && echo MU-SSH-PROCS
${PY}
pl=
if [ -n "$4" ] && command -v perl >/dev/null 2>&1; then pl=perl; [ -x /usr/bin/perl ] && pl=/usr/bin/perl; fi
if [ -n "$pl" ] && "$pl" -e "$4" 2>/dev/null; then echo MU-SSH-REAPER
elif [ -n "$py" ] && "$py" -I -S -c "$3" 2>/dev/null; then echo MU-SSH-REAPER; fi
cd -- "$root" 2>/dev/null && mkdir -p "${STATE}" 2>/dev/null && test -w "${STATE}" && echo MU-SSH-WRITABLE
echo MU-SSH-SH
`;

/** ssh's remote command: a login-shell line that runs one of the scripts above with its args. */
export function shLine(script: string, args: string[], q: (s: string) => string): string {
  return ["sh", "-c", q(script), "mu-plugin-ssh", ...args.map(q)].join(" ");
}
