import { muSlips } from "../plugin/mu-messages.js";
import type { World } from "../plugin/world.js";
import { messageCounts } from "../runner/counts.js";
import type { readBack } from "./read-back.js";

type ReadBack = Awaited<ReturnType<typeof readBack>>;

// What one scenario file's run on the virtual engine tells its caller: the
// runner's verdict, and what the explorer's invariants look at.

export type VirtualOutcome =
  | { ran: false; why: string }
  | {
      ran: true;
      failure?: string;
      exits: (number | null)[];
      transcript: { in: Record<string, number>; out: Record<string, number> };
      effects: Record<string, number>;
      intents: number;
      /** How each mu step ended by signal (SIGKILL for a killed one), else null. */
      signals: (string | null)[];
      /** What the world holds, by acquire and start key, and what mu recorded. */
      worldHosts: Record<string, { handle: string; released: boolean }>;
      /** The world's jobs by key, with the agent (workstream/name) each was started for. */
      worldJobs: Record<string, { state: string; agent?: string }>;
      muHosts: { key: string; state: string }[];
      muJobs: { key: string; state: string }[];
      pendingKeys: string[];
      /** Why mu's database does not open, or fails its integrity check. */
      dbProblem?: string;
      /** Every message mu sent the plugin, a line each. */
      sent: string;
      /** Calls about a machine or job that went to another instance than it was made under. */
      crossings: string[];
      /** msgIds of deliveries the sim answered with a reply that contradicts the request. */
      wrongReplies: string[];
      /** Messages mu wrote that break the protocol (sim/plugin/mu-messages.ts). */
      muSlips: string[];
      /** Everything mu printed, stdout and stderr. */
      output: string;
      /** Each mu step's stdout, in the order of exits. */
      stdouts: string[];
      /** Each mu step's stderr, in the order of exits. */
      stderrs: string[];
      /** The world's effect counts as each mu step ended, in the order of exits. */
      effectsAfter: Record<string, number>[];
      dbBytes: Uint8Array | null;
      /** Virtual time the scenario took. */
      virtualMs: number;
      /** How often the clock jumped to a timer: each jump costs a turn of real work. */
      clockJumps: number;
      /** Reattaches that exited 0 while the view they recorded died within the readiness window. */
      deadViews: string[];
      /** Spawns and reattaches that exited 0 whose live agent's view a verb beside them killed. */
      killedViews: string[];
      /** Records that were there before a power cut and are gone after it. */
      lostCommits: string[];
      /** mu invocations that exited by themselves while a plugin process they started still ran. */
      outlived: string[];
      /** Records naming a host, profile, plugin or job that is gone, seen after a join or at the end. */
      dangling: string[];
      /** Calls about a job that named another machine than the one it was started on. */
      otherMachine: string[];
      /** Commits a step reported collected that are not its own place's, or that no ref reaches (collects.ts). */
      wrongCollects: string[];
      /** Lines of the traces mu wrote for steps whose environment asked for one. */
      traces: string[];
      /** Temp files of mu's database left at the end by a writer that no longer runs. */
      deadTemps: string[];
      /** Agents' views still running at the end. */
      liveViews: string[];
      /** Worktrees still on the sim's machines at the end (real-side.ts). */
      treesOnHosts: string[];
      /** An agent's committed work that no ref and no tree holds at the end (lost-work.ts). */
      lostWork?: string[];
    };

type Ran = Extract<VirtualOutcome, { ran: true }>;

/** What the run itself gathered, beside what the world and mu's DB hold at its end. */
export type RunFacts = Pick<
  Ran,
  | "exits"
  | "signals"
  | "output"
  | "stdouts"
  | "stderrs"
  | "effectsAfter"
  | "dbBytes"
  | "virtualMs"
  | "clockJumps"
  | "deadViews"
  | "killedViews"
  | "lostCommits"
  | "outlived"
  | "dangling"
  | "wrongCollects"
  | "traces"
  | "deadTemps"
  | "liveViews"
  | "treesOnHosts"
  | "lostWork"
> & { failure: string | undefined };

/** One run's outcome: the world's counts and notes, mu's records, and the run's own facts. */
export function outcomeOf(db: ReadBack, world: World, facts: RunFacts): Ran {
  const { failure, ...rest } = facts;
  const transcript = world.transcript();
  const state = world.state();
  const notes = (key: string) =>
    transcript.filter((l) => l.dir === "note" && key in l.msg).map((l) => l.msg[key]);
  return {
    ran: true,
    ...(failure ? { failure } : {}),
    ...rest,
    transcript: { in: messageCounts(transcript, "in"), out: messageCounts(transcript, "out") },
    effects: state.effects,
    intents: db.intents.length,
    worldHosts: state.hosts ?? {},
    worldJobs: Object.fromEntries(
      Object.entries(state.jobs ?? {}).map(([k, j]) => [k, { state: j.state, agent: j.agent }]),
    ),
    muHosts: db.hosts.map((h) => ({ key: h.key, state: h.state })),
    muJobs: db.jobs,
    pendingKeys: db.intents,
    ...(db.problem ? { dbProblem: db.problem } : {}),
    sent: transcript
      .filter((l) => l.dir === "in")
      .map((l) => JSON.stringify(l.msg))
      .join("\n"),
    crossings: notes("otherInstance").map((v) => JSON.stringify(v)),
    otherMachine: notes("otherMachine").map((v) => JSON.stringify(v)),
    wrongReplies: notes("wrongReply").map((v) => String(v)),
    muSlips: muSlips(transcript),
  };
}

/** Each mu step's ending in its place among the steps: a background one's is filled at its join. */
export class StepLog {
  readonly exits: (number | null)[] = [];
  readonly signals: (string | null)[] = [];
  readonly stdouts: string[] = [];
  readonly stderrs: string[] = [];
  readonly effectsAfter: Record<string, number>[] = [];
  output = "";

  /** A place for a step that ends later. */
  reserve(): number {
    this.signals.push(null);
    return this.exits.push(null) - 1;
  }

  record(
    at: number,
    r: { exit: number | null; signal: string | null; stdout: string; stderr: string },
    effects: Record<string, number>,
  ): void {
    this.exits[at] = r.exit;
    this.signals[at] = r.signal;
    this.stdouts[at] = r.stdout;
    this.stderrs[at] = r.stderr;
    // What the world had applied by then, for the model's effect checks (sim/model/).
    this.effectsAfter[at] = { ...effects };
    this.output += r.stdout + r.stderr;
  }

  facts(): Pick<RunFacts, "exits" | "signals" | "stdouts" | "stderrs" | "effectsAfter" | "output"> {
    const { exits, signals, stdouts, stderrs, effectsAfter, output } = this;
    return { exits, signals, stdouts, stderrs, effectsAfter, output };
  }
}
