import { describe, expect, it } from "vitest";
import { modelDivergence } from "../sim/model/oracle.js";
import { raceDiverges } from "../sim/model/races.js";
import { forgettable, keyCaps, row } from "../sim/model/rules.js";
import { ModelState, subjectsOf } from "../sim/model/state.js";
import { allowedExits } from "../sim/model/verbs.js";
import type { LoadedScenario, Step } from "../sim/runner/scenario.js";

// The explorer's model of mu (sim/model/): the rule table's rows, the races'
// allowed exits, and a run stepped beside it.

const run = (steps: Step[], world: Record<string, unknown> = {}) =>
  ({
    scenario: "t",
    about: "",
    proves: [],
    world: { preset: "link-job", instance: "sim-1", ...world },
    steps,
    file: "",
  }) as LoadedScenario;

/** A run whose every step ended as given, with no effects unless said. */
const seen = (
  exits: number[],
  effectsAfter = exits.map(() => ({})),
  stdouts = exits.map(() => ""),
) => ({
  exits,
  signals: exits.map(() => null),
  stdouts,
  effectsAfter,
});

const SPAWNED = [
  { mu: "plugin add sim -- /opt/mu/mu-plugin-sim" },
  { mu: "host add box --plugin sim" },
  { mu: "agent spawn a --host box" },
];
const START = { "job.start:k1": 1 };

describe("the model's rule table", () => {
  it("settles a fenced lookup's none, and a file kind's none never", () => {
    expect(row(keyCaps(undefined), "none", 0)).toBe("settled");
    expect(row(keyCaps(undefined, true), "none", 60_000)).toBe("unsettled");
    expect(row(keyCaps({ fenceKey: false }), "none", 29_999)).toBe("unsettled");
    expect(row(keyCaps({ fenceKey: false }), "none", 30_000)).toBe("settled");
  });

  it("settles no lookup by a resend inside the window only", () => {
    const caps = keyCaps({ lookup: false, dedupe: { exact: true, windowMs: 600_000 } });
    expect(forgettable(caps, 40_000, 400_000)).toBe("never");
    expect(forgettable(caps, 40_000, 700_000)).toBe("maybe");
  });
});

describe("the model beside a run", () => {
  it("holds on a run that answers as the model says", () => {
    const s = run([
      ...SPAWNED,
      { mu: "agent read a" },
      { mu: "agent close a" },
      { mu: "agent read a" },
    ]);
    const stop = { ...START, "job.stop:k1": 1 };
    expect(
      modelDivergence(s, seen([0, 0, 0, 0, 0, 3], [{}, {}, START, START, stop, stop])),
    ).toBeUndefined();
  });

  it("finds a verb on a closed agent that does not answer not found", () => {
    const s = run([...SPAWNED, { mu: "agent close a" }, { mu: "agent send a hi" }]);
    const stop = { ...START, "job.stop:k1": 1 };
    expect(modelDivergence(s, seen([0, 0, 0, 0, 0], [{}, {}, START, stop, stop]))).toMatch(
      /step 5 'agent send a hi' exited 0; the model allows 3/,
    );
  });

  it("finds a spawn in calm that applied no start", () => {
    expect(modelDivergence(run(SPAWNED), seen([0, 0, 0]))).toMatch(/applied 0 job.start effect/);
  });

  it("finds a refusal that blames another mu where none ran, and lets a race's pass", () => {
    const busy =
      "mu: host 'h1' is being acquired by another mu, its call to the plugin still in flight\n";
    const alone = run([
      { mu: "plugin add sim -- /opt/mu/mu-plugin-sim" },
      { mu: "host acquire --provider sim h1" },
      { mu: "host release h1" },
    ]);
    const acquired = { "host.acquire:h1-k": 1 };
    const out = { ...seen([0, 0, 4], [{}, acquired, acquired]), stderrs: ["", "", busy] };
    expect(modelDivergence(alone, out)).toMatch(
      /step 3 'host release h1' blames another mu, where none ran beside it: .*being acquired/,
    );
    const racing = run([
      { mu: "plugin add sim -- /opt/mu/mu-plugin-sim" },
      { mu: "host acquire --provider sim h1", background: true },
      { mu: "host release h1" },
      { join: true },
    ] as Step[]);
    expect(modelDivergence(racing, out)).toBeUndefined();
  });

  it("finds an agent list that leaves out a spawned agent", () => {
    const s = run([...SPAWNED, { mu: "agent list" }]);
    const out = seen([0, 0, 0, 0], [{}, {}, START, START], ["", "", "", "no agents\n"]);
    expect(modelDivergence(s, out)).toMatch(/does not list a/);
  });

  it("judges nothing it cannot know: the same send under a fault", () => {
    const s = run([
      ...SPAWNED,
      { world: { faults: [{ on: "channel.send", do: { crash: "after" } }] } },
      { mu: "agent send a hi" },
    ]);
    expect(modelDivergence(s, seen([0, 0, 0, 1], [{}, {}, START, START]))).toBeUndefined();
  });

  /** Two verbs at once and the exits they ended with, as raceDiverges takes them. */
  const raceOf = (first: string, second: string) => (a: number, b: number) => [
    { words: first.split(" "), exit: a },
    { words: second.split(" "), exit: b },
  ];
  const ACQUIRE = "host acquire --provider sim h1";
  /** What each verb answers alone, judged on the model `m` as it stands before the race. */
  const aloneOn = (m: ModelState) => (w: string[]) => allowedExits(m, w, false);

  it("allows each race only the exits a winner and a loser give", () => {
    const two = raceOf(ACQUIRE, ACQUIRE);
    expect(raceDiverges(two(0, 4))).toBeUndefined();
    expect(raceDiverges(two(0, 0))).toMatch(/exited 0\/0; the model allows 0\/4, 4\/0/);
  });

  it("judges no race whose one run was killed before it answered", () => {
    const race = [
      { words: ACQUIRE.split(" "), exit: null },
      { words: ACQUIRE.split(" "), exit: 0 },
    ];
    expect(raceDiverges(race)).toBeUndefined();
  });

  it("takes a verb on a host recorded under another instance than the plugin answers as for fenced, not calm", () => {
    const steps = [
      { mu: "plugin add sim -- /opt/mu/mu-plugin-sim" },
      { mu: "host acquire --provider sim h2" },
      { mu: "host status h2" },
    ];
    const acquired = ["", "acquired h2: sim-h2-1 (plugin sim, instance sim-2)\n", ""];
    const made = [{}, { "host.acquire:k1": 1 }, { "host.acquire:k1": 1 }];
    // Recorded under sim-2 while the world answers as sim-1: the fence refuses (4).
    expect(modelDivergence(run(steps), seen([0, 0, 4], made, acquired))).toBeUndefined();
    // Recorded under sim-1, the instance the world answers as: only the answer (0).
    const same = ["", "acquired h2: sim-h2-1 (plugin sim, instance sim-1)\n", ""];
    expect(modelDivergence(run(steps), seen([0, 0, 4], made, same))).toMatch(
      /step 3 'host status h2' exited 4; the model allows 0/,
    );
  });

  it("takes a release that host rm beat for not found, never for an acquire in flight", () => {
    const race = raceOf("host release h1", "host rm h1");
    const allowed: [number, number][] = [
      [0, 0],
      [0, 4],
      [3, 0],
    ];
    for (const [a, b] of allowed) expect(raceDiverges(race(a, b))).toBeUndefined();
    expect(raceDiverges(race(4, 0))).toMatch(/exited 4\/0; the model allows 0\/0, 0\/4, 3\/0/);
  });

  it("lets one of two resumes of a spawn cut short finish it, never both", () => {
    const spawn = "agent spawn c --host box";
    const race = raceOf(spawn, spawn);
    // The spawn killed half-way leaves the model not knowing what the name holds.
    const m = new ModelState();
    m.doubt(subjectsOf(spawn.split(" ")), 0, spawn.split(" "));
    const alone = aloneOn(m);
    expect(raceDiverges(race(0, 4), alone)).toBeUndefined();
    expect(raceDiverges(race(4, 0), alone)).toBeUndefined();
    expect(raceDiverges(race(0, 0), alone)).toMatch(/exited 0\/0; the model allows 0\/4, 4\/0/);
  });

  it("lets host rm remove a host only once the close racing it settled its pending delivery", () => {
    const race = raceOf("agent close a", "host rm box");
    expect(raceDiverges(race(0, 0))).toBeUndefined();
    expect(raceDiverges(race(0, 4))).toBeUndefined();
    expect(raceDiverges(race(0, 3))).toMatch(/exited 0\/3; the model allows 0\/0, 0\/4/);
  });

  it("finds a host rm that removed the host a delivery the state before named as pending targets", () => {
    const pending = "pending: channel.send for agent:main/a (key msg-1)\n";
    const s = run([
      ...SPAWNED,
      { mu: "agent close a", env: { MU_CRASH_AT: "effect.intent-deleted" } },
      { mu: "state" },
      { mu: "host rm box" },
    ] as Step[]);
    const ran = (rm: number) => ({
      ...seen([0, 0, 0, 0, 0, rm], [{}, {}, START, START, START, START]),
      exits: [0, 0, 0, null, 0, rm],
      signals: [null, null, null, "SIGKILL", null, null],
      stdouts: ["", "", "", "", pending, ""],
    });
    expect(modelDivergence(s, ran(4))).toBeUndefined();
    expect(modelDivergence(s, ran(0))).toMatch(
      /step 6 'host rm box' removed host box, which the pending delivery to agent a/,
    );
  });

  it("lets two verbs that each find nothing to act on both answer not found", () => {
    const race = raceOf("agent send a hello-1", "agent close a");
    const m = new ModelState();
    const alone = aloneOn(m);
    expect(raceDiverges(race(3, 3), alone)).toBeUndefined();
    expect(raceDiverges(race(0, 0), alone)).toMatch(/exited 0\/0; the model allows 3\/3/);
    // Once the agent was spawned the table holds: one of them finds it there.
    m.agents.set("a", { state: "live", host: "box", doubt: {} });
    expect(raceDiverges(race(3, 3), alone)).toMatch(/the model allows 0\/0, 3\/0, 4\/0, 0\/4/);
  });

  it("lets two acquires of a name already ready both be refused, as each would be alone", () => {
    const race = raceOf(ACQUIRE, ACQUIRE);
    const m = new ModelState();
    const alone = aloneOn(m);
    m.hosts.set("h1", { state: "ready", plugin: "sim", machine: true, doubt: {} });
    expect(raceDiverges(race(4, 4), alone)).toBeUndefined();
    expect(raceDiverges(race(0, 4), alone)).toMatch(/exited 0\/4; the model allows 4\/4/);
  });
});
