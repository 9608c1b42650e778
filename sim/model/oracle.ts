import type { Fault } from "../plugin/fault-types.js";
import { argv, type LoadedScenario } from "../runner/scenario.js";
import { blamesAnotherMu } from "./alone.js";
import { DeliveryWatch } from "./deliveries.js";
import {
  ArchiveWatch,
  dyingView,
  edgeExits,
  restartCountDiverges,
  waitLinesDiverge,
} from "./edges.js";
import { effectsDiverge } from "./effects.js";
import { learn } from "./learn.js";
import { pendingVerbDiverges } from "./pending.js";
import { raceDiverges } from "./races.js";
import { forgetDiverges } from "./settle.js";
import { ModelState, subjectsOf } from "./state.js";
import { allowedExits } from "./verbs.js";

// The model stepped beside a run: after every mu step, what it answered is
// compared with what the model allows, and the model learns from it. The
// first divergence is the finding; a run with none returns nothing.

/** What the model reads of a run: each mu step's ending, stdout and the world's effect counts after it. */
export interface Observed {
  exits: (number | null)[];
  signals: (string | null)[];
  stdouts: string[];
  /** Each mu step's stderr; a run made by hand may leave it out. */
  stderrs?: string[];
  effectsAfter: Record<string, number>[];
  /** Every message mu sent the plugin, a line each. */
  sent?: string;
}

/**
 * Faults that change no verb's answer: the process group's nemesis (a slow
 * stop) and a call held well inside its deadline.
 */
const groupOnly = (f: Fault) =>
  (f.on === "initialize" && ("slowExitMs" in f.do || "groupHelper" in f.do)) ||
  ("delayMs" in f.do && f.do.delayMs <= 3_000);

export function modelDivergence(
  s: LoadedScenario,
  o: Partial<Observed> & Pick<Observed, "exits" | "signals">,
): string | undefined {
  // Without each step's stdout and effects (an outcome made by hand) there is nothing to step beside.
  if (!o.stdouts || !o.effectsAfter) return undefined;
  const { stdouts, effectsAfter } = o;
  const m = new ModelState();
  // The model knows the registry only from an empty database on: a run that
  // does not begin by registering a plugin is judged with its plugins unknown.
  const first = s.steps.find((st) => "mu" in st);
  if (!first || !argv(first.mu).join(" ").startsWith("plugin add ")) m.unknownPlugins = true;
  let faulted = (s.world?.faults ?? []).some((f) => !groupOnly(f));
  let instance = s.world?.instance ?? "sim-1";
  let now = 0;
  let elapsed = 0;
  let running = 0;
  let seen: Record<string, number> = {};
  const racing: { words: string[]; at: number }[] = [];
  const archive = new ArchiveWatch();
  const deliveries = new DeliveryWatch();
  let i = -1;
  for (const st of s.steps) {
    if ("world" in st) {
      elapsed += st.elapseMs ?? 0;
      if (st.world.faults) faulted = st.world.faults.some((f) => !groupOnly(f));
      if (st.world.instance) instance = st.world.instance;
      continue;
    }
    if ("join" in st) {
      const race = raceDiverges(
        racing.map((r) => ({ words: r.words, exit: o.exits[r.at] })),
        (w) => allowedExits(m, w, false),
      );
      if (race && !faulted) return race;
      for (const r of racing) m.doubt(subjectsOf(r.words), now, r.words);
      racing.length = 0;
      running = 0;
      continue;
    }
    if (!("mu" in st)) continue;
    i++;
    if (i >= o.exits.length) break;
    const words = argv(st.mu);
    const env = { ...s.env, ...st.env };
    now = Number(env.MU_CLOCK_OFFSET_MS ?? 0) + elapsed;
    const exit = o.exits[i];
    const before = seen;
    seen = { ...seen };
    for (const [k, v] of Object.entries(effectsAfter[i] ?? {})) seen[k] = Math.max(seen[k] ?? 0, v);
    deliveries.note(words);
    if (st.background || running > 0) {
      // Several mu at once: judged together at their join (races.ts).
      deliveries.forget();
      running++;
      racing.push({ words, at: i });
      continue;
    }
    const crash = env.MU_CRASH_AT !== undefined || env.MU_TESTBED_POWER_CUT !== undefined;
    if (env.MU_TESTBED_POWER_CUT !== undefined) m.doubtAll(now);
    // A host recorded under another instance than the plugin now answers as
    // is fenced off (stop-changed): no verb on it is calm.
    const fenced = offInstance(m, words, instance);
    const settledCalm = !faulted && !crash && instance === "sim-1" && !fenced;
    const step = `step ${i + 1} '${words.map(shown).join(" ")}'`;
    const blamed = blamesAnotherMu(o.stderrs?.[i] ?? "");
    if (blamed) return `${step} ${blamed}`;
    const ended = o.signals[i] ? null : (exit ?? null);
    const held = deliveries.step(words, ended, stdouts[i] ?? "", settledCalm);
    if (held) return `${step} ${held}`;
    const kept = archive.step(
      m,
      words,
      o.signals[i] ? null : (exit ?? null),
      stdouts[i] ?? "",
      now,
      settledCalm,
      m.owes(subjectsOf(words)),
    );
    if (kept) return `${step} ${kept}`;
    if (exit === null || exit === undefined || o.signals[i]) {
      m.doubt(subjectsOf(words), now, words);
      continue;
    }
    // A view that dies under a spawn is judged by its exit alone: what the
    // failed spawn left is learnt from later verbs.
    const calm = settledCalm && !dyingView(words, env);
    const allowed = edgeExits(m, words, env, settledCalm) ?? allowedExits(m, words, calm);
    if (allowed && !allowed.includes(exit))
      return `${step} exited ${exit}; the model allows ${allowed.join(" or ")}`;
    const lines = waitLinesDiverge(words, stdouts[i] ?? "");
    if (lines) return `${step} ${lines}`;
    const pending = pendingVerbDiverges(m, s, words, exit, stdouts[i] ?? "", now);
    if (pending) return `${step} ${pending}`;
    const forget = calm ? forgetDiverges(m, s, words, exit, now) : undefined;
    if (forget) return `${step} ${forget}`;
    const on = subjectsOf(words);
    if (calm && allowed && !m.owes(on)) {
      const eff = effectsDiverge(words, exit, before, effectsAfter[i] ?? {});
      if (eff) return `${step} ${eff}`;
      const read = readDiverges(m, words, exit, stdouts[i] ?? "");
      if (read) return `${step} ${read}`;
    }
    if (!calm) m.doubt(on, now, words);
    else if (exit === 0) m.settled(on);
    learn(m, words, exit, stdouts[i] ?? "");
  }
  return o.sent === undefined ? undefined : restartCountDiverges(stdouts, o.sent);
}

/** A word as a finding shows it: a message of a megabyte by its start and length. */
const shown = (w: string) => (w.length > 64 ? `${w.slice(0, 16)}…(${w.length} bytes)` : w);

/** `agent list` in calm names every agent the model knows is there, and none it knows is gone. */
function readDiverges(
  m: ModelState,
  words: string[],
  exit: number,
  stdout: string,
): string | undefined {
  if (words[0] !== "agent" || words[1] !== "list" || exit !== 0) return undefined;
  for (const [name, a] of m.agents) {
    const listed = new RegExp(`(^|\\s)main/${name}\\s`, "m").test(stdout);
    if (a.state === "live" && !listed) return `does not list ${name}, which the model holds live`;
    if (a.state === "absent" && listed) return `lists ${name}, which the model holds gone`;
  }
  return undefined;
}

/** Whether a host the verb reaches (named, or its agent's) was recorded under another instance. */
function offInstance(m: ModelState, words: string[], instance: string): boolean {
  const on = subjectsOf(words);
  const hosts = [...on.hosts, ...on.agents.flatMap((a) => m.agent(a).host ?? [])];
  return hosts.some((h) => {
    const at = m.host(h).instance;
    return at !== undefined && at !== instance;
  });
}
