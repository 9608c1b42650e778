import { DELIVERIES } from "../../host/effects/decide.js";
import { merge } from "../plugin/declaration.js";
import type { Fault } from "../plugin/fault-types.js";
import type { WorldConfig } from "../plugin/world.js";
import type { LoadedScenario } from "../runner/scenario.js";
import { agentVerb, callOf } from "./agent-verbs.js";
import { concurrentWorkload, LATER_RACES, RACES, WORKTREE_RACE } from "./concurrent-workload.js";
import { edgeProbes } from "./edge-probes.js";
import { HOLD, hostWorkload } from "./host-workload.js";
import { liveness } from "./liveness.js";
import { withGroupNemesis } from "./nemesis.js";
import { rng } from "./rng.js";
import { type Swarm, swarmOf } from "./swarm.js";
import { anyFault, EFFECT_POINTS, pick, type Rand, Script, wrongReply } from "./workload-script.js";

// The explorer's random workloads. A seed picks one of two families (machines
// on a provider host; agents, with their jobs and channels, on a profile
// host or on a provider's machine that it may lose under them), a
// declaration, a run of verbs and, between them, faults: the
// plugin crashing, erring, hanging, answering late around a deadline,
// answering twice or invalidly, SIGKILLing mu, changing its instance; time
// passing past an in-flight bound or a dedupe window; and mu itself dying at
// a crash point.

/** Effect calls an agent verb makes, whose writer a nemesis may hold alive. */
const AGENT_EFFECTS = ["job.start", "job.stop", ...DELIVERIES];

const AGENT_CAPS: Record<string, unknown>[] = [
  {},
  { job: { view: "bound" } },
  { job: { handle: "file" } },
  {
    job: {
      start: {
        lookup: false,
        fenceKey: false,
        inFlightMs: null,
        dedupe: { exact: true, windowMs: 600_000 },
      },
    },
  },
  { channel: { caps: { receipt: "none" } } },
  { channel: { caps: { receipt: "none", dedupe: "none" } } },
];

const AGENT_CALLS = [
  "job.start",
  "job.lookup",
  "job.status",
  "job.stop",
  "job.attach",
  "channel.send",
  "channel.fresh",
  "channel.command",
  "channel.interrupt",
  "channel.abort",
  "channel.answer",
  "channel.receipt",
  "channel.status",
  "channel.watch",
];

/**
 * How often an agent workload's agents run on a machine acquired from the
 * plugin, which the provider may then lose under them, instead of on a
 * profile host that cannot be lost.
 */
const ON_MACHINE = 0.3;

/**
 * The provider reports the machine gone, and host status acts on it: the
 * jobs that outlive their host are stopped (a stop that may meet a fault of
 * its own, left pending for the next status to settle), the others are
 * ended with it. Drawn from its own stream only.
 */
function loseMachine(w: Script, lose: Rand, host: string, swarm: Swarm): void {
  const roll = lose();
  if (roll >= 0.3) return;
  if (roll < 0.2) {
    const faults: Fault[] = [{ on: "host.status", do: { loseHost: true } }];
    if (lose() < 0.5) faults.push({ on: "job.stop", do: anyFault(lose, swarm) });
    w.setFaults(faults);
  }
  // Otherwise a status that finds it as the last one left it.
  w.verbAside(`host status ${host}`, lose() < 0.12 ? pick(lose, EFFECT_POINTS) : undefined);
  // Often run again at once, as after a failed one, before any verb on an
  // agent could settle what the first left pending.
  if (lose() < 0.5) w.verbAside(`host status ${host}`);
}

function agentWorkload(
  r: Rand,
  hold: Rand,
  nemesis: Rand,
  lose: Rand,
  late: Rand,
  swarm: Swarm,
  edge: Rand,
): Pick<LoadedScenario, "world" | "steps" | "env"> {
  const agents = ["a", "b"];
  // Half the deaths at a view's opening come once its row names it, before
  // readiness and the first prompt (a spawn to finish, not to start over).
  const w = new Script(r, [...EFFECT_POINTS, "view.pane-opened"], (p) =>
    p === "view.pane-opened" && late() < 0.5 ? "view.recorded" : p,
  );
  const machine = lose() < ON_MACHINE;
  const outlives = machine && lose() < 0.5;
  const host = machine ? "h1" : "box";
  // The sim's at-start kind has no provider seam: on a machine, on-send only.
  const atStart = r() < 0.25 && !machine;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
  w.verb("plugin add sim -- ${sim} --world ${world}", false);
  w.verb(machine ? `host acquire --provider sim ${host}` : "host add box --plugin sim", false);
  const n = 2 + Math.floor(r() * 7);
  let texts = 0;
  const next = () => ++texts;
  for (let i = 0; i < n; i++) {
    w.maybePass();
    // Only once an agent may be there to lose with it.
    if (machine && i > 0) loseMachine(w, lose, host, swarm);
    const a = pick(r, agents);
    const other = a === "a" ? "b" : "a";
    // Mostly verbs on an agent that runs: spawns first, and often.
    const mu =
      i === 0
        ? `agent spawn ${a} --host ${host}${atStart ? ` --send first-${next()}` : ""}`
        : agentVerb(r, a, other, atStart, next, host, swarm);
    const own = callOf(mu);
    if (own && ["channel.command", "channel.abort", "channel.answer"].includes(own) && r() < 0.3) {
      // A delivery without a msgId, applied just before mu dies: the case
      // that must never be resent.
      w.fault(own, { killMu: "after" });
    } else if (r() < 0.4) {
      // Half the faults meet the verb's own call, so each verb meets each fault.
      const on = r() < 0.5 ? (own ?? pick(r, AGENT_CALLS)) : pick(r, AGENT_CALLS);
      // A watch may also settle after mu cancelled it, crossing the cancel.
      const usual =
        on === "channel.watch" && r() < 0.3
          ? { settleOnCancel: true as const }
          : anyFault(r, swarm);
      // Or a wrong reply, from its own stream: other seeds stay as they were.
      w.fault(on, wrongReply(nemesis, on) ?? usual);
    }
    // A view that the backend reports and that dies a moment later.
    const view: Record<string, string> =
      mu.startsWith("agent reattach") && r() < 0.5 ? { MU_MUX_SIM: "dies" } : {};
    if (own && AGENT_EFFECTS.includes(own) && hold() < HOLD) {
      const meanwhile = pick<() => string>(hold, [
        () => `agent read ${a}`,
        () => `agent send ${a} held-${next()}`,
        () => `agent command ${a} compact --instructions held-${next()}`,
        () => `agent close ${a}`,
      ])();
      w.held(mu, own, meanwhile, view);
    } else w.verb(mu, true, view);
  }
  // Settle: no faults, past every in-flight bound (a start that hung is
  // provably not running only then), every agent read (which resolves what
  // it owes), then closed. A start no rule can ever settle (a file kind's
  // none, a window passed with no lookup) is then ended the way a person
  // would, by forget; on an agent the close ended it finds nothing (exit 3).
  // Probes on names of their own, on the profile host: part of the
  // workload, so a finding in one shrinks like any other.
  if (!machine) edgeProbes(w, edge, { host, atStart, next });
  w.endAgents(agents);
  // The machine, lost or not, is ended the way a person would.
  if (machine) for (const v of ["status", "release", "rm"]) w.verb(`host ${v} ${host}`, false);
  const turnMs = pick(r, [0, 300, 60_000]);
  // An at-start kind answers with a reply handle and its own start: a
  // declaration that changes its job seam is refused at load.
  const seams = pick(
    r,
    AGENT_CAPS.filter((c) => !atStart || c.job === undefined),
  );
  liveness(w, r, atStart, next, turnMs, machine);
  const world: WorldConfig = {
    preset: machine ? "provider-full" : atStart ? "reply-at-start" : "link-job",
    instance: "sim-1",
    turnMs,
    hello: {
      seams: outlives ? (merge(seams, { job: { outlivesHost: true } }) as object) : seams,
    },
  };
  return { world, env: { MU_MUX: "sim" }, steps: w.steps };
}

/** Which families a seed may draw from beside the two every run has. */
export interface Families {
  /** Several mu at once (concurrent-workload.ts), in about a third of the seeds. */
  concurrent?: boolean;
  /** Only these of its races (their names in concurrent-workload.ts), in every seed. */
  races?: string[];
}

/** How often a seed draws the concurrent family, when it is on. */
const CONCURRENT = 0.35;

/** How often a concurrent seed races closes of --worktree agents (real git runs: slower). */
const WORKTREE = 0.15;

/** How often a concurrent seed that races no worktree closes draws each of LATER_RACES. */
const LATER = 0.1;

/**
 * The race a concurrent seed draws from a stream of its own, if any: the
 * worktree closes, or one of LATER_RACES, each of those with a stream of
 * its own too (the first that draws it wins). So a seed that drew a race
 * before a later one was added still draws it; with `only` naming none of
 * RACES, one of the later ones named is drawn every time.
 */
function ownStreamRace(seed: number, only?: readonly string[]): string | undefined {
  const on = (name: string) => !only || only.includes(name);
  const t = rng(seed ^ 0x7ee5_f00d);
  const worktree = only
    ? only.includes(WORKTREE_RACE) && (only.length === 1 || t() < WORKTREE)
    : t() < WORKTREE;
  if (worktree) return WORKTREE_RACE;
  const later = LATER_RACES.filter((x) => on(x.name));
  if (later.length === 0) return undefined;
  if (!RACES.some((x) => on(x.name))) return pick(rng(seed ^ LATER_SALT), later).name;
  const drawn = LATER_RACES.find(
    (x, i) => on(x.name) && rng(seed ^ (LATER_SALT + i * 0x9e37_79b9))() < LATER,
  );
  return drawn?.name;
}

/** The stream of the first of LATER_RACES; each next one's is a step further. */
const LATER_SALT = 0x1a7e_2ace;

/** One random workload: a world and the steps mu runs in it. */
export function workload(
  seed: number,
  env: Record<string, string> = {},
  families: Families = {},
): LoadedScenario {
  // Drawn from a stream of its own: with the family on, every other seed's
  // workload is the one it always was.
  const c = rng(seed ^ 0x0c0c_0a11);
  const share = families.races ? 1 : CONCURRENT;
  if (families.concurrent && c() < share) {
    const w = concurrentWorkload(
      c,
      families.races,
      ownStreamRace(seed, families.races),
      rng(seed ^ 0x7ee5_c075),
    );
    return {
      scenario: `found/seed-${seed}`,
      about: `explorer seed ${seed}, several mu at once`,
      proves: ["explore.invariants"],
      world: w.world,
      env: { ...w.env, ...env },
      // Which invocation goes on at each step of theirs is the seed's too.
      interleave: seed,
      steps: w.steps,
      file: "",
    };
  }
  const r = rng(seed);
  // Each nemesis draws from a stream of its own, so the rest of a seed's
  // workload is drawn as it was before that nemesis existed.
  const hold = rng(seed ^ 0x5eed_0ff5);
  const wrongReply = rng(seed ^ 0x5bd1e995);
  const lose = rng(seed ^ 0x1057_a11e);
  const late = rng(seed ^ 0x1a7e_d1e5);
  // Which fault kinds and verbs this seed uses (swarm.ts), from a stream of its own.
  const swarm = swarmOf(seed);
  const edge = rng(seed ^ 0x0ed9_e5ee);
  const w =
    r() < 0.5
      ? hostWorkload(r, hold, swarm)
      : agentWorkload(r, hold, wrongReply, lose, late, swarm, edge);
  if (w.world) withGroupNemesis(seed, w.world, w.steps);
  return {
    scenario: `found/seed-${seed}`,
    about: `explorer seed ${seed}`,
    proves: ["explore.invariants"],
    world: w.world,
    env: { ...w.env, ...env },
    steps: w.steps,
    file: "",
  };
}
