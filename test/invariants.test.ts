import { describe, expect, it } from "vitest";
import type { LoadedScenario } from "../sim/runner/scenario.js";
import { canaryFor, invariants } from "../sim/virtual/invariants.js";
import type { VirtualOutcome } from "../sim/virtual/run-scenario.js";

// Each of the explorer's invariants, shown to break on an outcome that
// breaks it and to hold on one that does not: an invariant that cannot fail
// would find nothing.

type Ran = Extract<VirtualOutcome, { ran: true }>;
const canary = canaryFor(3);

const scenario = (steps: LoadedScenario["steps"], faults: unknown[] = []): LoadedScenario =>
  ({
    scenario: "t",
    about: "",
    proves: [],
    world: { preset: "provider-full", instance: "sim-1", faults },
    env: { MU_PLUGIN_CANARY: canary },
    steps,
    file: "",
  }) as LoadedScenario;

const clean = (over: Partial<Ran> = {}): Ran => ({
  ran: true,
  exits: [0, 0],
  signals: [null, null],
  transcript: { in: {}, out: {} },
  effects: { "host.acquire:h1-k": 1, "host.release:h1-k": 1 },
  intents: 0,
  worldHosts: { "h1-k": { handle: "m1", released: false } },
  worldJobs: { "job-1": { state: "running" } },
  muHosts: [{ key: "h1-k", state: "ready" }],
  muJobs: [{ key: "job-1", state: "running" }],
  pendingKeys: [],
  sent: '{"method":"host.acquire"}',
  crossings: [],
  wrongReplies: [],
  output: "acquired h1\n",
  dbBytes: new TextEncoder().encode("SQLite format 3"),
  virtualMs: 0,
  clockJumps: 0,
  deadViews: [],
  killedViews: [],
  lostCommits: [],
  outlived: [],
  dangling: [],
  otherMachine: [],
  muSlips: [],
  wrongCollects: [],
  traces: [],
  deadTemps: [],
  liveViews: [],
  ...over,
});

const two = scenario([{ mu: "host acquire --provider sim h1" }, { mu: "host status h1" }]);
/** A run whose last step, the liveness check's plugin rm, committed: what must be gone by then is. */
const removing = scenario([
  { mu: "host acquire --provider sim h1" },
  { mu: "plugin rm sim", exit: 0 },
]);

describe("the explorer's invariants", () => {
  it("hold on a clean outcome", () => {
    expect(invariants(clean(), two)).toEqual([]);
  });

  it("hold when a wrong reply left the delivery unknown", () => {
    const output =
      "mu: effect: channel.send for agent:main/a may or may not have happened (key msg-1): …\n";
    expect(invariants(clean({ wrongReplies: ["msg-1"], output }), two)).toEqual([]);
  });

  it.each([
    [
      "an effect applied twice",
      { effects: { "job.start:job-1": 2 } },
      /job\.start:job-1 was applied 2 times/,
    ],
    ["a machine mu forgot", { muHosts: [] }, /machine m1 \(key h1-k\) exists, but mu neither/],
    [
      "a job mu forgot",
      { muJobs: [{ key: "job-1", state: "stopped" }] },
      /job job-1 runs, but mu neither/,
    ],
    ["a call across the fence", { crossings: ['{"method":"host.release"}'] }, /another instance/],
    [
      "a call about a job to another machine",
      { otherMachine: ['{"method":"job.status","job":"job-1","on":"m1","named":"m2"}'] },
      /about a job went to another machine than the job's/,
    ],
    [
      "a collect that reported another fetch's commit",
      {
        wrongCollects: [
          "'agent close a' named a commit from wt:t/a that no fetch from there brought",
        ],
      },
      /a collect reported what is not its own: 'agent close a' named a commit/,
    ],
    [
      "a record naming what is gone",
      { dangling: ["agent main/c names host box, which is gone"] },
      /a record names what is gone: agent main\/c names host box/,
    ],
    [
      "a delivery reported made on a reply naming another msgId",
      { wrongReplies: ["msg-1"], output: "sent msg-1 to main/a (baseline 0)\n" },
      /reported delivery msg-1 made on a reply that names another msgId/,
    ],
    [
      "a database that does not read back",
      { dbProblem: "file is not a database" },
      /does not read back/,
    ],
    ["the canary on the wire", { sent: `{"x":"${canary}"}` }, /canary is in a message/],
    [
      "a request of mu's that breaks the protocol",
      { muSlips: ["id 3 used twice"] },
      /mu broke the protocol: id 3 used twice/,
    ],
    ["the canary in the output", { output: canary }, /canary is in mu's output/],
    [
      "the canary in the database",
      { dbBytes: new TextEncoder().encode(canary) },
      /canary is in mu's database/,
    ],
    ["an exit code outside the table", { exits: [0, 6] }, /exited 6, outside mu's table/],
    [
      "a death with nothing to kill",
      { exits: [0, null], signals: [null, "SIGKILL"] },
      /killed with nothing set to kill it/,
    ],
  ] as const)("break on %s", (_what, over, line) => {
    expect(invariants(clean(over as Partial<Ran>), two).join("\n")).toMatch(line);
  });

  it("what is still journaled is not forgotten", () => {
    expect(
      invariants(clean({ muHosts: [], muJobs: [], pendingKeys: ["h1-k", "job-1"] }), two),
    ).toEqual([]);
  });

  it("breaks on an intent left once the liveness check removed the plugin, and only then", () => {
    expect(invariants(clean({ pendingKeys: ["job-1"] }), removing).join("\n")).toMatch(
      /intents no verb can end: job-1 pending after the plugin was removed/,
    );
    expect(invariants(clean({ pendingKeys: [] }), removing)).toEqual([]);
    // The removal refused: the liveness check itself reports that.
    const refused = clean({ pendingKeys: ["job-1"], exits: [0, 4] });
    expect(invariants(refused, removing).join("\n")).not.toMatch(/intents no verb can end/);
  });

  it("breaks on a dead writer's temp left after the last commit, and only then", () => {
    const left = clean({ deadTemps: ["mu.db.tmp-41-ab12"] });
    expect(invariants(left, removing).join("\n")).toMatch(
      /a dead writer's temp outlived later commits: mu\.db\.tmp-41-ab12/,
    );
    // Without a committed removal at the end, a temp may still be the last writer's.
    expect(invariants(left, two)).toEqual([]);
  });

  it("breaks on a view still running once the plugin's removal ended the run", () => {
    const left = clean({ liveViews: ["sim-00000001 (main/a)"] });
    expect(invariants(left, removing).join("\n")).toMatch(
      /a view outlived its agent's close: sim-00000001 \(main\/a\)/,
    );
    expect(invariants(left, two)).toEqual([]);
  });

  it("a death is fine where a crash point or a killMu fault was set", () => {
    const killed = clean({ exits: [0, null], signals: [null, "SIGKILL"] });
    const atPoint = scenario([
      { mu: "host acquire --provider sim h1" },
      { mu: "host status h1", env: { MU_CRASH_AT: "effect.intent-durable" } },
    ]);
    expect(invariants(killed, atPoint)).toEqual([]);
    const byPlugin = scenario([
      { mu: "host acquire --provider sim h1" },
      { world: { faults: [{ on: "host.status", do: { killMu: "before" } }] } },
      { mu: "host status h1" },
    ]);
    expect(invariants(killed, byPlugin)).toEqual([]);
  });

  it("break on a liveness check that did not exit as it expects", () => {
    const live = scenario([
      { mu: "host acquire --provider sim h1" },
      { mu: "host status h1", exit: 0 },
    ]);
    expect(invariants(clean(), live)).toEqual([]);
    expect(invariants(clean({ exits: [0, 5] }), live)).toEqual([
      "mu is no longer usable: 'host status h1' exited 5, not 0",
    ]);
  });

  it("break on a command applied more often than it was asked for", () => {
    const cmd = scenario([{ mu: "agent command a compact" }, { mu: "agent read a" }]);
    expect(invariants(clean({ effects: { "channel.command:compact": 1 } }), cmd)).toEqual([]);
    expect(invariants(clean({ effects: { "channel.command:compact": 2 } }), cmd)).toEqual([
      "channel.command:compact was applied 2 times but asked for 1",
    ]);
  });

  it("break on a reattach that left a dead view, and on a commit a power cut lost", () => {
    expect(invariants(clean({ deadViews: ["v"], lostCommits: ["c"] }), two)).toEqual([
      "a commit that returned was lost: c",
      "a reattach left no live view: v",
    ]);
  });

  it("break on a live agent's view another verb killed", () => {
    expect(invariants(clean({ killedViews: ["'agent spawn a' exited 0"] }), two)).toEqual([
      "a live agent's view was killed by another mu: 'agent spawn a' exited 0",
    ]);
  });

  it("hold on a job forget --abandon named to the person", () => {
    const gone = { muJobs: [] };
    const line =
      "forgot main/a: mu no longer tracks its job job-1 on box; if it still runs there, stop it yourself\n";
    expect(invariants(clean({ ...gone, output: line }), two)).toEqual([]);
    expect(invariants(clean({ ...gone, output: "" }), two)).toEqual([
      "job job-1 runs, but mu neither records it nor has an intent for it",
    ]);
  });

  it("breaks on a job mu state lists on two lines, and only then", () => {
    const pending =
      "pending: job.stop for agent:main/a (key job-1a) since 2026-01-01T00:00:00.000Z; run: mu agent close a -w main";
    const lost =
      "notice: the job of agent:main/a outlives its lost host and is not stopped yet; run: mu agent close a -w main";
    const send =
      "pending: channel.send for agent:main/a (key msg-1) since 2026-01-01T00:00:00.000Z; run: mu agent check a msg-1 -w main";
    const other = lost.replaceAll("main/a", "main/b").replace(" a -w", " b -w");
    const listed = (text: string) => invariants(clean({ stdouts: [text] }), two);
    expect(listed(`${pending}\n${send}\n${other}\n`)).toEqual([]);
    expect(listed(`${pending}\n${lost}\n`)).toEqual([
      `mu state lists the job of agent:main/a twice: ${pending} | ${lost}`,
    ]);
  });

  it("a power cut may kill the step it hits", () => {
    const cut = scenario([
      { mu: "host acquire --provider sim h1" },
      { mu: "host status h1", env: { MU_TESTBED_POWER_CUT: "3" } },
    ]);
    expect(invariants(clean({ exits: [0, null], signals: [null, "SIGKILL"] }), cut)).toEqual([]);
  });
});
