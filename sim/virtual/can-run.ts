import type { LoadedScenario, Step } from "../runner/scenario.js";
import { argv, ownStdio } from "../runner/scenario.js";

// Which scenario files the virtual engine runs, and which of those need a
// real directory beside it. A step that runs sh or git, or a host script,
// runs as a real process in a real temp directory while virtual time stands
// still; mu itself, its database and the sim stay in-process. What still
// needs the real engine is what only a real mu process gives: signals from
// outside, a pid a script can kill, files mu writes on its own disk.

/** Host verbs whose scripts, fetches or pushes the sim runs for real on its machines. */
const HOST_SCRIPTS = ["exec", "fetch", "push", "check"];

/** sh that reaches mu's own (in-memory) files, an installed launcher among them, or real processes by pid: none exists here. */
const OUT_OF_REACH = /\$\{root\}\/state|\$\{bin:|\bkill\b|\bpgrep\b|\bps\b/;

/** Why a scenario needs the real engine, or undefined when the virtual one can run it. */
export function needsRealEngine(s: LoadedScenario): string | undefined {
  const faults = [
    ...(s.world?.faults ?? []),
    ...s.steps.flatMap((st) => ("world" in st ? (st.world.faults ?? []) : [])),
  ];
  for (const f of faults) {
    const kind = Object.keys(f.do)[0] ?? "";
    if (["setsidHelper", "execIgnoresTimeout"].includes(kind))
      return `a ${kind} fault needs real processes`;
    // What a plugin that closes its stdin after answering and runs on idle
    // does next is up to a real process's event loop; the runOn variant is
    // held until its group is killed, which the engine models.
    if (kind === "closeStdin" && (f.do as { closeStdin: unknown }).closeStdin === true)
      return "a closeStdin fault that lets the plugin run on idle needs a real process";
  }
  if (s.world?.proxy) return "a proxied plugin is a real process";
  const replay = s.world?.replay;
  for (const st of s.steps) {
    // The virtual views read the recorded view's env, which a trace keeps
    // only with MU_TRACE_CONTENT=1.
    if (replay && !replay.content && "mu" in st && argv(st.mu)[0] === "agent")
      return "agents' views replayed from a trace that hashed their env";
    if ("sh" in st && OUT_OF_REACH.test(st.sh))
      return "a script that reads mu's own files or signals a process by pid";
    if (!("mu" in st)) continue;
    if (st.signal) return "a signal sent to a real mu process";
    // An in-process mu reads and writes the engine's own stdin and stdout.
    const stdio = ownStdio(st);
    if (stdio === "stdin") return "mu's stdin fed by the step";
    if (stdio === "stdout") return "mu's stdout closed by the step";
    const env = { ...s.env, ...st.env };
    // In-process, mu's git and sh are found on the engine's own PATH.
    if (env.PATH !== undefined) return "a PATH of the scenario's own";
    // The engine places mu's database itself, by MU_DB_PATH.
    if (env.MU_DB_PATH !== undefined || env.MU_STATE_DIR !== undefined)
      return "mu's database placed by the scenario's own MU_DB_PATH or MU_STATE_DIR";
    const words = argv(st.mu);
    if ((words[0] === "agent" || words[0] === "wait") && env.MU_MUX !== "sim")
      return "agents' views in tmux, which runs real processes";
    // mu's own file calls go to the virtual disk: one naming a real path
    // (FETCH_HEAD it deletes in a checkout, a world of the scenario's own
    // making) would miss the real file.
    if (words.some((w) => w.includes("$" + "{root}")))
      return "mu's own file calls on a path in the scenario's root";
  }
  return undefined;
}

function touchesRealFiles(st: Step): boolean {
  if ("sh" in st) return true;
  if (!("mu" in st)) return false;
  const words = argv(st.mu);
  return (
    st.cwd !== undefined ||
    (words[0] === "host" && HOST_SCRIPTS.includes(words[1] ?? "")) ||
    words.includes("--worktree")
  );
}

/**
 * Whether the run needs a real directory for the world and the steps' files:
 * the sim's machines are real directories where scripts and git really run.
 */
export function needsRealDir(s: LoadedScenario): boolean {
  return s.steps.some(touchesRealFiles);
}
