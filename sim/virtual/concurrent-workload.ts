import type { Fault } from "../plugin/fault-types.js";
import type { LoadedScenario, Step } from "../runner/scenario.js";
import { LATER_RACES } from "./later-races.js";
import { liveness } from "./liveness.js";
import type { Race } from "./race.js";
import { anyFault, pick, type Rand, Script } from "./workload-script.js";

// The explorer's concurrent family: several mu at once on one host, plugin
// or agent, as a crew or a script looping with `&` runs them. A seed picks a
// race (two verbs that each change what the other decides on), which of the
// two starts first, sometimes a third verb beside them, how long the plugin
// holds a call of theirs (so one meets the other at another point), and
// now and then a fault; the engine's seeded scheduler then picks, at every
// disk operation, timer and lock wait, which of them goes on. Afterwards
// everything is closed and removed, and mu must still be usable.

// biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
const SIM = "${sim} --world ${world}";
/** The second plugin: the sim again, under a name of its own, on a world of its own that says so. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
const SIM2 = "${bin:mu-plugin-sim2} --world ${world}/w2";
const WORLD2 = JSON.stringify({
  preset: "provider-full",
  instance: "sim-1",
  hello: {
    plugin: { name: "sim2" },
    seams: { channel: { name: "sim2" }, job: { channel: "sim2" } },
  },
});

export { LATER_RACES };

export const RACES: Race[] = [
  {
    name: "spawn racing host rm",
    setup: [],
    verbs: ["agent spawn c --host box", "host rm box"],
    calls: ["job.start", "channel.watch"],
    aside: ["agent list", "state"],
  },
  {
    name: "spawn racing host release",
    setup: ["host acquire --provider sim h1"],
    verbs: ["agent spawn c --host h1", "host release h1"],
    calls: ["job.start", "host.release"],
    aside: ["host status h1", "agent list"],
  },
  {
    name: "host add racing plugin rm",
    setup: [`plugin add sim2 -- ${SIM2}`],
    verbs: ["host add box2 --plugin sim2", "plugin rm sim2"],
    calls: [],
    aside: ["plugin list", "host list"],
  },
  {
    name: "host acquire racing plugin rm",
    setup: [`plugin add sim2 -- ${SIM2}`],
    verbs: ["host acquire --provider sim2 h3", "plugin rm sim2"],
    calls: ["host.acquire"],
    aside: ["plugin list", "host list"],
  },
  {
    name: "two closes",
    setup: ["agent spawn a --host box"],
    verbs: ["agent close a", "agent close a"],
    calls: ["job.stop"],
    aside: ["agent read a", "agent list"],
  },
  {
    name: "send racing close",
    setup: ["agent spawn a --host box"],
    verbs: ["agent send a hello-1", "agent close a"],
    calls: ["channel.send", "job.stop"],
    aside: ["agent read a", "wait a --timeout 2"],
  },
  {
    name: "two acquires of one name",
    setup: [],
    verbs: ["host acquire --provider sim h1", "host acquire --provider sim h1"],
    calls: ["host.acquire"],
    aside: ["host status h1", "host list"],
  },
  {
    name: "host release racing a send",
    setup: ["host acquire --provider sim h1", "agent spawn a --host h1"],
    verbs: ["host release h1", "agent send a hello-1"],
    calls: ["host.release", "channel.send"],
    aside: ["agent read a", "host status h1"],
  },
  {
    name: "reattach racing close",
    setup: ["agent spawn a --host box"],
    verbs: ["agent reattach a", "agent close a"],
    calls: ["job.attach", "job.stop"],
    aside: ["agent list", "state"],
  },
  {
    name: "two spawns of one name",
    setup: [],
    verbs: ["agent spawn c --host box", "agent spawn c --host box"],
    calls: ["job.start"],
    aside: ["agent list", "agent read c"],
  },
];

/** How long the plugin holds the first verb's call: not at all, a moment, or well into the second verb. */
const HOLDS = [0, 0, 200, 3_000];

/**
 * Closes of two --worktree agents on one checkout, racing each other and
 * now and then a `mu host fetch` into the same checkout: each collect's
 * fetch is a real git run by the sim, between two of the scheduler's turns,
 * so another's fetch may land between one's fetch and its reading of what
 * it brought. Drawn from a stream of its own (workloads.ts), so the other
 * races' seeds stay as they were.
 */
export const WORKTREE_RACE = "closes of worktree agents on one checkout";

/** Commits whose dates are fixed, so one seed makes the same commits every run. */
const FIXED_DATES =
  "export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z";

function worktreeRace(r: Rand, w: Script, cut?: Rand): void {
  w.steps.push({
    sh: `${FIXED_DATES}; cd \${root} && git init -q local && cd local && echo one > f && git add f && git commit -qm one`,
  });
  w.verb("host add wt --plugin sim --repo seeded", false);
  const agents = ["a1", "a2"];
  // Now and then one spawn is cut short once the script that makes its tree
  // ran: mu dies there, the answer is lost, or mu dies with its start
  // journaled and never sent. Its close must take the tree away with the
  // record (a tree nothing names is a leak).
  const cutShort = cut && cut() < 0.3;
  if (cut && cutShort) {
    const which = pick(cut, [0, 1]);
    // Each spawn runs two scripts: the commit's check, then the tree's.
    const tree = { on: "link.exec", call: 2 + 2 * which };
    w.setFaults([
      pick<Fault>(cut, [
        { ...tree, do: { killMu: "after" } },
        { ...tree, do: { error: { kind: "unknown-outcome", applied: true } } },
        { on: "job.start", call: 1 + which, do: { killMu: "before" } },
      ]),
    ]);
  }
  for (const a of agents)
    w.steps.push({ mu: `agent spawn ${a} --host wt --worktree`, cwd: "local" } as Step);
  // Each agent's work: a commit of its own in its tree, if its spawn made one.
  w.steps.push({
    sh: [
      FIXED_DATES,
      ...agents.map(
        (a) =>
          `if cd \${world}/machines/wt/mu/trees/main/${a} 2>/dev/null; then echo ${a} > work-${a} && git add work-${a} && git commit -qm "${a}'s work"; fi`,
      ),
    ].join("\n"),
  });
  if (cutShort) w.setFaults([]);
  const calls = ["link.fetch", "link.exec", "job.stop"];
  const faults: Fault[] = [];
  const hold = pick(r, HOLDS);
  if (hold > 0) faults.push({ on: pick(r, calls), do: { delayMs: hold } });
  if (r() < 0.15) faults.push({ on: pick(r, calls), do: anyFault(r) });
  if (faults.length > 0) w.setFaults(faults);
  const [first, second] = r() < 0.5 ? agents : [...agents].reverse();
  const racing: Step[] = [{ mu: `agent close ${first}`, background: true } as Step];
  if (r() < 0.5) racing.push({ mu: "host fetch wt", cwd: "local", background: true } as Step);
  racing.push({ mu: `agent close ${second}` } as Step, { join: true });
  w.steps.push(...racing);
  w.endAgents(agents);
  // Each name spawned again meets whatever tree its close left at the path
  // (one that moved on stays): that tree's commit must not go with it.
  for (const a of agents)
    w.steps.push(
      { mu: `agent spawn ${a} --host wt --worktree`, cwd: "local" } as Step,
      { mu: `agent close ${a}` } as Step,
    );
  w.verb("host rm wt", false);
}

/** One race, drawn from its seed: the set-up, the verbs at once, then the settle and the liveness check. */
export function concurrentWorkload(
  r: Rand,
  only?: readonly string[],
  /** The worktree race or one of LATER_RACES instead of one of RACES (drawn by the caller from a stream of its own). */
  drawn?: string,
  /** The worktree race's own stream for cutting a spawn short, so its other draws stay as they were. */
  cut?: Rand,
): Pick<LoadedScenario, "world" | "steps" | "env"> {
  const w = new Script(r, []);
  w.verb(`plugin add sim -- ${SIM}`, false);
  w.verb("host add box --plugin sim", false);
  if (drawn === WORKTREE_RACE) {
    worktreeRace(r, w, cut);
    return settled(w, r);
  }
  const race =
    LATER_RACES.find((x) => x.name === drawn) ??
    pick(
      r,
      RACES.filter((x) => !only || only.includes(x.name)),
    );
  for (const v of race.setup) {
    if (v.includes("mu-plugin-sim2"))
      w.steps.push(
        { sh: `mkdir -p \${world}/w2 && echo '${WORLD2}' > \${world}/w2/world.json` },
        { install: { as: "mu-plugin-sim2" } },
      );
    w.verb(v, false);
  }
  if (race.lost) {
    // The provider loses the machine and a status records it so; the race
    // then starts with no fault left, so the model judges its exits.
    w.setFaults([{ on: "host.status", do: { loseHost: true } }]);
    w.verb(`host status ${race.lost}`, false);
    w.setFaults([]);
  }
  for (const c of race.cut ?? []) {
    if (c.faults) w.setFaults(c.faults);
    w.aside(c.verb, c.at ? { MU_CRASH_AT: pick(r, c.at) } : {});
  }
  if (race.cut?.some((c) => c.faults)) w.setFaults([]);
  for (const v of race.alone ?? []) w.verb(v, false);
  const [x, y] = race.verbs;
  const inOrder = r() < 0.5;
  const [first, second] = inOrder || race.after ? [x, y] : [y, x];
  const faults: Fault[] = [...(race.faults ?? [])];
  const call = race.calls.length > 0 ? pick(r, race.calls) : undefined;
  const hold = pick(r, HOLDS);
  if (call && hold > 0) faults.push({ on: call, do: { delayMs: hold } });
  // Now and then a fault too, on a call of either verb.
  if (call && r() < 0.15) faults.push({ on: pick(r, race.calls), do: anyFault(r) });
  if (faults.length > 0) w.setFaults(faults);
  const env = race.env ? { env: race.env } : {};
  const racing: Step[] = [{ mu: first, background: true, ...env } as Step];
  if (r() < 0.3) racing.push({ mu: pick(r, race.aside), background: true } as Step);
  const after = race.after ? { afterSeen: race.after } : {};
  racing.push({ mu: second, ...env, ...after } as Step, { join: true });
  w.steps.push(...racing);
  // Settle: no faults, past every in-flight bound; every agent read, closed
  // and forgotten, every machine looked at, released and removed, the
  // second plugin and the profiles removed. Any of these may find nothing
  // to do (exit 3) or be refused for a reason the next one ends.
  w.endAgents(["a", "c"]);
  for (const h of ["h1", "h3"])
    for (const v of ["status", "forget", "release", "rm"]) w.verb(`host ${v} ${h}`, false);
  w.verb("host rm box2", false);
  w.verb("plugin rm sim2", false);
  return settled(w, r);
}

/** Everything can be closed and removed: a new agent spawns, takes a delivery and a send, closes, and the host and the plugin go. */
function settled(w: Script, r: Rand): Pick<LoadedScenario, "world" | "steps" | "env"> {
  liveness(w, r, false, counter(), 300, false);
  return {
    world: { preset: "provider-full", instance: "sim-1", turnMs: 300 },
    env: { MU_MUX: "sim" },
    steps: w.steps,
  };
}

function counter(): () => number {
  let n = 100;
  return () => ++n;
}
