import type { LoadedScenario } from "../runner/scenario.js";
import type { Swarm } from "./swarm.js";
import { anyFault, EFFECT_POINTS, pick, type Rand, Script, weighted } from "./workload-script.js";

// The explorer's machine workload: host verbs on a provider plugin, with
// faults between them, then a settle that must leave every record endable.

const HOST_CAPS: Record<string, unknown>[] = [
  {},
  { host: { acquire: { fenceKey: false } } },
  {
    host: {
      acquire: {
        lookup: false,
        fenceKey: false,
        inFlightMs: null,
        dedupe: { exact: true, windowMs: 600_000 },
      },
    },
  },
];

/** The effect call a host verb makes, for the verbs that write an intent. */
const HOST_EFFECT: Record<string, string> = { acquire: "host.acquire", release: "host.release" };

export /** How often a verb that writes an intent is held alive while another verb on its subject runs. */
const HOLD = 0.1;

/** A lookup whose none no fence and no in-flight bound can ever prove. */
const UNPROVABLE = { host: { acquire: { fenceKey: false, inFlightMs: null } } };

export function hostWorkload(
  r: Rand,
  hold: Rand,
  swarm: Swarm = {},
): Pick<LoadedScenario, "world" | "steps" | "env"> {
  const hosts = ["h1", "h2"];
  const w = new Script(r, EFFECT_POINTS);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
  w.verb("plugin add sim -- ${sim} --world ${world}", false);
  const n = 2 + Math.floor(r() * 6);
  for (let i = 0; i < n; i++) {
    if (r() < 0.4) {
      const on = pick(r, ["host.acquire", "host.release", "host.lookup", "host.status"]);
      w.fault(
        on,
        on === "host.lookup" && r() < 0.5
          ? { reply: pick(r, [{ pending: true }, { unknown: "cannot tell" }]) }
          : anyFault(r, swarm),
      );
    }
    w.maybePass();
    const h = pick(r, hosts);
    // Mostly verbs on a machine that exists: acquires first, and often.
    const mu =
      i === 0
        ? `host acquire --provider sim ${h}`
        : weighted(
            r,
            [
              [4, `host acquire --provider sim ${h}`],
              [3, `host status ${h}`],
              [3, `host release ${h}`],
            ] as const,
            (v) => !swarm.verbs || swarm.verbs.has(v.split(" ")[1] ?? ""),
          );
    // Now and then a power cut some disk operations into the verb.
    const cut: Record<string, string> =
      r() < 0.15 ? { MU_TESTBED_POWER_CUT: String(1 + Math.floor(r() * 40)) } : {};
    const call = HOST_EFFECT[mu.split(" ")[1] ?? ""];
    if (call && hold() < HOLD) {
      const next = pick(hold, ["status", "acquire --provider sim", "release"]);
      w.held(mu, call, `host ${next} ${h}`, cut);
    } else w.verb(mu, true, cut);
  }
  // Settle: no faults, past the in-flight bound (a fence-less none is
  // proven only then), every host looked at, so what can be resolved is. An
  // acquire no rule can ever settle (a window passed with no lookup) is then
  // ended the way a person would, by forget; the machines are released and
  // the records removed (a host with no record left is not found, exit 3),
  // after which nothing may hold the plugin.
  const settle = () => {
    for (const h of hosts) {
      w.verb(`host status ${h}`, false);
      w.verb(`host forget ${h}`, false);
      w.verb(`host release ${h}`, false);
      w.verb(`host rm ${h}`, false);
    }
  };
  const moved = w.steps.some(
    (s) => "world" in s && (s.world.faults ?? []).some((f) => "setInstance" in f.do),
  );
  // Drawn after the workload, so each seed's verbs and faults stay what they
  // were: now and then a kind whose none nothing can ever prove (no fence,
  // no in-flight bound), and a settle past the dedupe window, so an acquire
  // that a resend could still settle is sometimes one only forget can end.
  const caps = pick(r, HOST_CAPS);
  const seams = r() < 0.15 ? UNPROVABLE : caps;
  w.clear();
  w.pass(r() < 0.5 ? 700_000 : 40_000);
  settle();
  // What was recorded under the other instance is reached only through it
  // (stop-changed): the person points the plugin back at it, as its hint says.
  if (moved) {
    w.instance("sim-2");
    settle();
  }
  w.must("plugin rm sim");
  return {
    world: { preset: "provider-full", instance: "sim-1", hello: { seams } },
    env: {},
    steps: w.steps,
  };
}
