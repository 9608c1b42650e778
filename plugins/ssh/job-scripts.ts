import { STATE } from "./remote-scripts.js";

// The remote side of jobs and their channel, in POSIX sh. A job is one
// directory, ${STATE}/jobs/<name>/, and one loop process started under
// setsid/nohup: the loop runs each accepted message as one turn of the
// harness, so every turn lives inside the job's own process group.
//
// Layout of a job directory:
//   pid, started | fenced | stopped   the loop's pid, and how the key was used
//   env.sh, cwd, harness, log          what the loop runs with, and its transcript
//                                      (env.sh, log, texts and outputs go at stop)
//   inc                                the current incarnation (channel session)
//   c/<inc>/runs, state, since, session
//   c/<inc>/r/<h>.seq|.text|.at        receipt <h> (sha256 of the msgId); .seq commits it
//   c/<inc>/out.<n>, err.<n>, code.<n> turn n's output
//   c/<inc>/why.<n>                    aborted | interrupted: who killed turn n

/** The job's own loop: $1 is the job directory (absolute). */
export const LOOP = `
J=$1
ms() { t=$(date +%s%3N 2>/dev/null); case $t in *N|'') echo "$(date +%s)000";; *) echo "$t";; esac; }
put() { printf '%s\\n' "$2" > "$1.tmp" && mv "$1.tmp" "$1"; }
# A delivery wakes the idle loop (USR1) rather than wait out its nap; the
# file says this loop takes the signal (one of an older plugin would die).
trap : USR1
: > "$J/wakes"
# Run only once the start that launched this loop is complete; a start cut
# short before that is fenced by the next lookup, and then this loop goes.
until [ -e "$J/started" ]; do [ -e "$J/fenced" ] && exit 0; sleep 0.1; done
. "$J/env.sh"
cd -- "$(cat "$J/cwd")" || exit 97
while :; do
  inc=$(cat "$J/inc"); C=$J/c/$inc
  runs=$(cat "$C/runs"); n=$((runs + 1)); f=
  for s in "$C"/r/*.seq; do
    [ -e "$s" ] && [ "$(cat "$s")" = "$n" ] && { f=\${s%.seq}; break; }
  done
  if [ -z "$f" ]; then sleep 0.2 & wait "$!"; continue; fi
  put "$C/since" "$(ms)"; put "$C/state" busy
  session=$(cat "$C/session")
  cmd=$(sed "s/{session}/$session/g" "$J/harness")
  printf '=== turn %s (session %s)\\n' "$n" "$session"
  # The turn has a group of its own, so an interrupt can end it and not the loop.
  MU_SSH_TURN=$n MU_SSH_SESSION=$session setsid sh -c "$cmd" < "$f.text" > "$C/out.$n" 2> "$C/err.$n" &
  t=$!
  put "$C/turn" "$t"
  # A wake ends a wait early, not the turn: wait on until the turn is reaped.
  while :; do wait "$t"; code=$?; kill -0 "$t" 2>/dev/null || break; done
  put "$C/code.$n" "$code"
  cat "$C/out.$n"
  put "$C/since" "$(ms)"; put "$C/state" idle
  put "$C/runs" "$n"
done
`;

/**
 * Every job and channel operation: $1 root, $2 job name, $3 op, then the
 * op's arguments. Answers one MU-… line (the state op adds its text after).
 */
export const JOBCTL = `
root=$1 name=$2 op=$3; shift 3
umask 077
cd -- "$root" && mkdir -p ${STATE}/jobs || { echo MU-JOB-NOROOT; exit 0; }
j=${STATE}/jobs/$name
ms() { t=$(date +%s%3N 2>/dev/null); case $t in *N|'') echo "$(date +%s)000";; *) echo "$t";; esac; }
put() { printf '%s\\n' "$2" > "$1.tmp" && mv "$1.tmp" "$1"; }
mine() { test -r "/proc/$1/environ" && grep -qzx "MU_SSH_JOB=$name" "/proc/$1/environ"; }
alive() { p=$(cat "$j/pid" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null && mine "$p"; }
lock() { i=0; until mkdir "$j/lock" 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && rmdir "$j/lock"; sleep 0.05; done; }
# Kills the running turn of $C, first saying why ($1) beside it, so its
# exit by SIGKILL reads as what it was; a turn that had already ended keeps none.
cut_turn() {
  m=$C/why.$(($(cat "$C/runs") + 1))
  put "$m" "$1"
  kill -KILL "-$(cat "$C/turn")" 2>/dev/null || rm -f "$m"
}
# The channel's state (state and await ops): $1 turn (0 for none, last for
# the last settled: the one the runs read here count), $2 incarnation or "", $3 cap.
state_of() {
  n=$1 want=$2 cap=$3
  [ -e "$j/pid" ] || { echo MU-CH-NOJOB; exit 0; }
  cur=$(cat "$j/inc"); inc=\${want:-$cur}; C=$j/c/$inc
  [ -d "$C" ] || { echo "MU-CH-NOINC $cur"; exit 0; }
  r=$(cat "$C/runs")
  [ "$n" = last ] && n=$r
  head="$cur $inc $r $(cat "$C/state") $(cat "$C/since")"
  if [ "$n" -gt 0 ] && [ -e "$C/code.$n" ]; then
    why=$(cat "$C/why.$n" 2>/dev/null)
    size=$(wc -c < "$C/out.$n" 2>/dev/null | tr -d ' ')
    printf 'MU-CH-STATE %s %s %s %s\\n' "$head" "$(cat "$C/code.$n")" "\${size:-0}" "\${why:--}"
    printf '%s\\n' "$(head -n 1 "$C/err.$n" 2>/dev/null | cut -c 1-300)"
    head -c "$cap" "$C/out.$n" 2>/dev/null
  else
    printf 'MU-CH-STATE %s - 0 -\\n\\n' "$head"
  fi
}
# A watch's wait on the remote, one session instead of a poll a turn: $1
# runs already seen, $2 incarnation, $3 cap, $4 seconds at most. Answers as
# state (the last settled turn) once a turn past $1 settled or the
# incarnation moved on; MU-CH-WAITED when the time is up. The blank line each nap is how a
# watch cancelled by the plugin ends here: the write fails.
await_turn() {
  after=$1 want=$2 cap=$3 i=0
  while read -r cur < "$j/inc" && [ "$cur" = "$want" ] && read -r runs < "$j/c/$want/runs" && [ "$runs" -le "$after" ]; do
    i=$((i + 1)); [ "$i" -gt $(($4 * 10)) ] && { echo MU-CH-WAITED; exit 0; }
    echo
    sleep 0.1
  done
  state_of last "$want" "$cap"
}
newinc() {
  mkdir -p "$j/c/$1/r" && put "$j/c/$1/runs" 0 && put "$j/c/$1/state" idle &&
  put "$j/c/$1/since" "$(ms)" && put "$j/c/$1/session" "$name-$1" && put "$j/inc" "$1"
}
case $op in
start)
  cwd=$1 harness=$2 loop=$3
  (cd -- "$cwd") 2>/dev/null || { echo MU-JOB-NOCWD; exit 0; }
  # Jobs stopped over a week ago go: no pending start can still ask about them.
  for s in $(find ${STATE}/jobs -mindepth 2 -maxdepth 2 -name stopped -mtime +7 2>/dev/null); do
    rm -rf "\${s%/stopped}"
  done
  if ! mkdir "$j" 2>/dev/null; then
    if [ -e "$j/started" ]; then echo MU-JOB-FOUND; elif [ -e "$j/fenced" ]; then echo MU-JOB-FENCED; else echo MU-JOB-PENDING; fi
    exit 0
  fi
  J=$(cd "$j" && pwd)
  # Held until the pid is written: a fencing lookup waits for it, or wins it first.
  lock
  [ -e "$J/fenced" ] && { rmdir "$j/lock"; echo MU-JOB-FENCED; exit 0; }
  cat > "$J/env.sh"
  printf '%s\\n' "$harness" > "$J/harness"
  (cd -- "$cwd" && pwd) > "$J/cwd"
  printf '%s\\n' "$loop" > "$J/loop.sh"
  newinc 1
  MU_SSH_JOB=$name setsid nohup sh "$J/loop.sh" "$J" </dev/null >>"$J/log" 2>&1 &
  echo $! > "$J/pid"
  : > "$J/started"
  rmdir "$j/lock"
  echo MU-JOB-FOUND ;;
lookup)
  # A job counts once its start marked it started: a loop whose start was cut
  # before that waits, and goes once the key is fenced.
  [ -e "$j/started" ] && { echo MU-JOB-FOUND; exit 0; }
  [ -e "$j/fenced" ] && { echo MU-JOB-NONE; exit 0; }
  if [ "$1" = 1 ]; then
    # The fence: a start that has not marked its job started under the lock never will.
    if mkdir "$j" 2>/dev/null; then : > "$j/fenced"; echo MU-JOB-NONE; exit 0; fi
    lock
    if [ -e "$j/started" ]; then echo MU-JOB-FOUND; else : > "$j/fenced"; echo MU-JOB-NONE; fi
    rmdir "$j/lock"; exit 0
  fi
  [ -d "$j" ] && { echo MU-JOB-PENDING; exit 0; }
  echo MU-JOB-NONE ;;
status)
  [ -e "$j/pid" ] || { echo MU-JOB-GONE; exit 0; }
  if alive; then echo MU-JOB-RUNNING; elif [ -e "$j/stopped" ]; then echo MU-JOB-STOPPED; else echo MU-JOB-DEAD; fi ;;
stop)
  [ -d "$j" ] || { echo MU-JOB-STOPPED; exit 0; }
  : > "$j/stopped"
  pg=$(cat "$j/pid" 2>/dev/null); i=0
  while :; do
    [ -n "$pg" ] && mine "$pg" && kill -KILL "-$pg" 2>/dev/null
    left=
    for e in $(grep -lzx "MU_SSH_JOB=$name" /proc/[0-9]*/environ 2>/dev/null); do
      p=\${e#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null; left=1
    done
    [ -z "$left" ] && break
    i=$((i + 1)); [ $i -gt 100 ] && { echo MU-JOB-STUCK; exit 0; }
    sleep 0.1
  done
  # A person's messages and the turns' answers go now: a lookup, a receipt
  # and a turn's state need only the small files that stay.
  rm -f "$j/env.sh" "$j/log" "$j"/c/*/r/*.text "$j"/c/*/out.* "$j"/c/*/err.*
  echo MU-JOB-STOPPED ;;
send|interrupt)
  # send: $1 msgId hash, $2 expected incarnation or "", $3 1 for fresh; the text on stdin.
  # interrupt: the same, and the running turn's group is killed first.
  h=$1 expect=$2 fresh=$3
  [ -e "$j/pid" ] || { echo MU-CH-NOJOB; exit 0; }
  lock
  inc=$(cat "$j/inc")
  if [ -n "$expect" ] && [ "$expect" != "$inc" ]; then rmdir "$j/lock"; echo "MU-CH-INC $inc"; exit 0; fi
  for f in "$j"/c/*/r/"$h".seq; do
    [ -e "$f" ] || continue
    i=\${f#"$j"/c/}; rmdir "$j/lock"; echo "MU-CH-DUP $(cat "$f") \${i%%/*}"; exit 0
  done
  # A repeat answers as the first did; a new delivery needs a job that runs.
  alive || { rmdir "$j/lock"; echo MU-CH-NOJOB; exit 0; }
  [ "$fresh" = 1 ] && { inc=$((inc + 1)); newinc "$inc"; }
  C=$j/c/$inc
  was=$(cat "$C/state")
  [ "$op" = interrupt ] && [ "$was" = busy ] && cut_turn interrupted
  seq=$(($(ls "$C/r" | grep -c '[.]seq$') + 1))
  cat > "$C/r/$h.text"
  put "$C/r/$h.at" "$(ms)"
  put "$C/r/$h.seq" "$seq"
  rmdir "$j/lock"
  [ -e "$j/wakes" ] && kill -USR1 "$p" 2>/dev/null
  echo "MU-CH-OK $seq $inc $was" ;;
abort)
  [ -e "$j/pid" ] || { echo MU-CH-NOJOB; exit 0; }
  C=$j/c/$(cat "$j/inc")
  was=$(cat "$C/state")
  [ "$was" = busy ] && cut_turn aborted
  echo "MU-CH-ABORT $was $(cat "$C/runs")" ;;
receipt)
  for f in "$j"/c/*/r/"$1".seq; do
    [ -e "$f" ] || continue
    i=\${f#"$j"/c/}; echo "MU-CH-ACC $(cat "$f") \${i%%/*} $(cat "\${f%.seq}.at")"; exit 0
  done
  echo MU-CH-NOT ;;
state) state_of "$@" ;;
await)
  [ -e "$j/pid" ] || { echo MU-CH-NOJOB; exit 0; }
  await_turn "$@" ;;
watch)
  # A watch's first reading, then its first wait, in one session (a session
  # costs the remote shell's start-up files each time): the state of the
  # current incarnation now, as state with no turn, then as await with $1
  # the runs already seen and $2 the incarnation, each taken from that
  # reading when empty.
  [ -e "$j/pid" ] || { echo MU-CH-NOJOB; exit 0; }
  cur=$(cat "$j/inc"); C=$j/c/$cur
  [ -d "$C" ] || { echo "MU-CH-NOINC $cur"; exit 0; }
  seen=$(cat "$C/runs")
  printf 'MU-CH-STATE %s %s %s %s %s - 0 -\\n\\n' "$cur" "$cur" "$seen" "$(cat "$C/state")" "$(cat "$C/since")"
  await_turn "\${1:-$seen}" "\${2:-$cur}" "$3" "$4" ;;
check)
  # As the loop's sh -c reads the harness: a leading ~ is the home directory.
  t=$1
  case $t in "~" | "~/"*) t=$HOME\${t#"~"} ;; esac
  case $t in
  */*) [ -x "$t" ] && [ -f "$t" ] && echo MU-JOB-HAS || echo MU-JOB-MISSING ;;
  *) command -v "$t" >/dev/null 2>&1 && echo MU-JOB-HAS || echo MU-JOB-MISSING ;;
  esac ;;
esac
`;
