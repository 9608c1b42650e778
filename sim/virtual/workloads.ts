import { DELIVERIES } from "../../host/effects/decide.js";
import type { WorldConfig } from "../plugin/world.js";
import type { LoadedScenario } from "../runner/scenario.js";
import { HOLD, hostWorkload } from "./host-workload.js";
import { withGroupNemesis } from "./nemesis.js";
import { rng } from "./rng.js";
import {
  anyFault,
  EFFECT_POINTS,
  pick,
  type Rand,
  Script,
  weighted,
  wrongReply,
} from "./workload-script.js";

// The explorer's random workloads. A seed picks one of two families (machines
// on a provider host; agents on a profile host, with their jobs and
// channels), a declaration, a run of verbs and, between them, faults: the
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

/** The call a verb makes that matters most, so a fault can meet it. */
function callOf(mu: string): string | undefined {
  const w = mu.split(" ");
  if (w[0] === "wait") return "channel.watch";
  if (w[1] === "spawn") return "job.start";
  if (w[1] === "close") return "job.stop";
  if (w[1] === "reattach") return "job.attach";
  if (w[1] === "read" || w[1] === "list") return "channel.status";
  if (w[1] === "send") return w.includes("--fresh") ? "channel.fresh" : "channel.send";
  if (["command", "interrupt", "abort", "answer"].includes(w[1] ?? "")) return `channel.${w[1]}`;
  return undefined;
}

/** Every verb an agent workload may run, by weight: the whole agent alphabet. */
function agentVerb(r: Rand, a: string, other: string, atStart: boolean, n: () => number): string {
  const first = atStart ? ` --send first-${n()}` : "";
  return weighted<() => string>(r, [
    [3, () => `agent spawn ${a} --host box${first}`],
    [1, () => `agent spawn ${a} --host box --send first-${n()}`],
    [3, () => `agent send ${a} hello-${n()}`],
    [1, () => `agent send ${a} steer-${n()} --steer`],
    [1, () => `agent send ${a} fresh-${n()} --fresh`],
    [1, () => `agent send ${a} force-${n()} --force`],
    [2, () => `agent command ${a} compact --instructions c-${n()}`],
    [1, () => `agent interrupt ${a} stop-${n()}`],
    [1, () => `agent abort ${a}`],
    [1, () => `agent answer ${a} y`],
    [2, () => `agent read ${a}`],
    [1, () => "agent list"],
    [1, () => "state"],
    [1, () => `wait ${a} --timeout 2`],
    [1, () => `wait ${a} ${other} --timeout 2`],
    [1, () => `wait ${a} ${other} --any --timeout 2`],
    [1, () => `agent reattach ${a}`],
    [2, () => `agent close ${a}`],
    [1, () => "host rm box"],
  ] as const)();
}

function agentWorkload(
  r: Rand,
  hold: Rand,
  nemesis: Rand,
): Pick<LoadedScenario, "world" | "steps" | "env"> {
  const agents = ["a", "b"];
  const w = new Script(r, [...EFFECT_POINTS, "view.pane-opened"]);
  const atStart = r() < 0.25;
  w.verb("plugin add sim -- ${sim} --world ${world}", false);
  w.verb("host add box --plugin sim", false);
  const n = 2 + Math.floor(r() * 7);
  let texts = 0;
  const next = () => ++texts;
  for (let i = 0; i < n; i++) {
    w.maybePass();
    const a = pick(r, agents);
    const other = a === "a" ? "b" : "a";
    // Mostly verbs on an agent that runs: spawns first, and often.
    const mu =
      i === 0
        ? `agent spawn ${a} --host box${atStart ? ` --send first-${next()}` : ""}`
        : agentVerb(r, a, other, atStart, next);
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
        on === "channel.watch" && r() < 0.3 ? { settleOnCancel: true as const } : anyFault(r);
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
  w.clear();
  w.pass(40_000);
  for (const a of agents) {
    w.verb(`agent read ${a}`, false);
    w.verb(`agent close ${a}`, false);
    w.verb(`agent forget ${a}`, false);
  }
  const turnMs = pick(r, [0, 300, 60_000]);
  // An at-start kind answers with a reply handle and its own start: a
  // declaration that changes its job seam is refused at load.
  const seams = pick(
    r,
    AGENT_CAPS.filter((c) => !atStart || c.job === undefined),
  );
  liveness(w, r, atStart, next, turnMs);
  const world: WorldConfig = {
    preset: atStart ? "reply-at-start" : "link-job",
    instance: "sim-1",
    turnMs,
    hello: { seams },
  };
  return { world, env: { MU_MUX: "sim" }, steps: w.steps };
}

/**
 * mu stays usable, whatever came before: with no fault left, a new agent
 * (z, a name the workload never uses, so an agent it left unresolvable
 * does not stand in the way) spawns, takes a delivery of any kind and then a send, a wait on its settled
 * turn returns, and again, and every record can be ended through verbs.
 */
function liveness(w: Script, r: Rand, atStart: boolean, next: () => number, turnMs: number): void {
  // The profile may have been removed: add it back (refused when it is there).
  w.verb("host add box --plugin sim", false);
  w.must(`agent spawn z --host box${atStart ? ` --send first-${next()}` : ""}`);
  w.must(
    pick(r, [
      `agent send z live-${next()}`,
      `agent send z live-${next()} --steer`,
      `agent send z live-${next()} --fresh`,
      `agent command z compact --instructions live-${next()}`,
    ]),
  );
  w.must(`agent send z after-${next()}`);
  // Three queued turns must settle inside the virtual engine's 120 s a step:
  // with minute-long turns they cannot, so those runs do not wait.
  if (turnMs <= 300) {
    w.must("wait z --timeout 60");
    w.must("wait z --timeout 60");
  }
  w.must("agent close z");
  w.must("host rm box");
  w.must("plugin rm sim");
}

/** One random workload: a world and the steps mu runs in it. */
export function workload(seed: number, env: Record<string, string> = {}): LoadedScenario {
  const r = rng(seed);
  // Each nemesis draws from a stream of its own, so the rest of a seed's
  // workload is drawn as it was before that nemesis existed.
  const hold = rng(seed ^ 0x5eed_0ff5);
  const wrongReply = rng(seed ^ 0x5bd1e995);
  const w = r() < 0.5 ? hostWorkload(r, hold) : agentWorkload(r, hold, wrongReply);
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
