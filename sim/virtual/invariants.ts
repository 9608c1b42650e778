import { modelDivergence } from "../model/oracle.js";
import { canaryPiece } from "../runner/judge.js";
import type { LoadedScenario } from "../runner/scenario.js";
import { workstreamOf } from "./read-back.js";
import type { VirtualOutcome } from "./run-scenario.js";
import { oversizeRequests } from "./size-check.js";
import { traceLeaks } from "./trace-check.js";

// What must hold after any run of the explorer, whatever the faults did. Each
// broken invariant is one line saying what went wrong.

type Ran = Extract<VirtualOutcome, { ran: true }>;

/** Effects a plugin applies at most once per key or msgId, whatever mu resends. */
const ONCE = ["host.acquire:", "job.start:", "channel.send:", "channel.fresh:"];

/** How often each msgId-less effect was asked for: `agent command <a> <name>` steps, by name. */
function commandsAsked(s: LoadedScenario): Map<string, number> {
  const asked = new Map<string, number>();
  for (const st of s.steps) {
    if (!("mu" in st)) continue;
    const w = typeof st.mu === "string" ? st.mu.split(" ") : st.mu;
    if (w[0] !== "agent" || w[1] !== "command" || !w[3]) continue;
    const key = `channel.command:${w[3]}`;
    asked.set(key, (asked.get(key) ?? 0) + 1);
  }
  return asked;
}

/** The spec's grace for a plugin's group to empty once told to stop. */
const GRACE_MS = 5_000;

/** Whether the world ever has a plugin that, told to stop, stays past the grace. */
function outstaysGrace(s: LoadedScenario): boolean {
  const faults = [
    ...(s.world?.faults ?? []),
    ...s.steps.flatMap((st) => ("world" in st ? (st.world.faults ?? []) : [])),
  ];
  return faults.some(
    (f) => "ignoreEof" in f.do || ("slowExitMs" in f.do && f.do.slowExitMs >= GRACE_MS),
  );
}

/**
 * Agents a `forget --abandon` was killed on: the person asked mu to let go
 * of the job, and a kill after the commit leaves it let go before its
 * forgot line was printed. Their jobs are the person's, as a named one is.
 */
function abandonsKilled(o: Ran, s: LoadedScenario): Set<string> {
  const out = new Set<string>();
  const verbs = s.steps.filter((st) => "mu" in st);
  for (const [k, st] of verbs.entries()) {
    const w = typeof st.mu === "string" ? st.mu.split(" ") : st.mu;
    if (w[0] !== "agent" || w[1] !== "forget" || !w.includes("--abandon") || !w[2]) continue;
    if (o.signals[k] !== "SIGKILL") continue;
    out.add(`${workstreamOf(w)}/${w[2]}`);
  }
  return out;
}

/** mu's exit codes (docs/cli.md's table): 6 is unused. */
const EXITS = [0, 1, 2, 3, 4, 5, 7];

/** The canary every explorer run hands the plugin; it must come back nowhere. */
export function canaryFor(seed: number): string {
  return `canary-${(seed >>> 0).toString(16).padStart(8, "0")}-do-not-store`;
}

/** The lines `mu state` prints about an agent's job (host/verbs/state-lines.ts), not its deliveries. */
const JOB_LINE = /^(?:pending: job\.\S+ for|notice:|owed:) /;

/**
 * A job `mu state` names on two lines reads as two things owed, each with
 * its own remedy: it lists each agent's job once.
 */
function listedTwice(stdouts: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of stdouts) {
    const seen = new Map<string, string>();
    for (const line of text.split("\n").filter((l) => JOB_LINE.test(l))) {
      const agent = line.match(/\bagent:[^\s)]+/)?.[0];
      if (agent === undefined) continue;
      const first = seen.get(agent);
      if (first !== undefined)
        out.push(`mu state lists the job of ${agent} twice: ${first} | ${line}`);
      seen.set(agent, line);
    }
  }
  return out;
}

export function invariants(o: Ran, s: LoadedScenario): string[] {
  const broken: string[] = [];
  for (const [effect, n] of Object.entries(o.effects))
    if (n > 1 && ONCE.some((p) => effect.startsWith(p)))
      broken.push(`${effect} was applied ${n} times: one intent, two effects`);
  // A command carries no msgId a dedupe could know it by: each must be
  // applied at most once per time it was asked for, never resent.
  for (const [effect, asked] of commandsAsked(s)) {
    const n = o.effects[effect] ?? 0;
    if (n > asked) broken.push(`${effect} was applied ${n} times but asked for ${asked}`);
  }

  // Nothing the world holds may be unknown to mu: neither recorded nor
  // journaled. A start or an acquire a person ended with forget was handed to
  // them by name, on the journal line that says mu cannot know whether it
  // happened, and a job forget --abandon let go on its forgot line: what
  // they made is theirs, not an orphan of mu's.
  const pending = new Set(o.pendingKeys);
  const forgotten = new Set([
    ...[
      ...o.output.matchAll(/(?:job\.start|host\.acquire) for \S+ \(key (\S+)\): forgotten \(/g),
    ].map((m) => m[1]),
    // A job forget --abandon let go, named to the person on its forgot line.
    ...[...o.output.matchAll(/mu no longer tracks its job (\S+) on /g)].map((m) => m[1]),
  ]);
  for (const [key, h] of Object.entries(o.worldHosts)) {
    if (h.released || pending.has(key) || forgotten.has(key)) continue;
    if (!o.muHosts.some((m) => m.key === key && m.state !== "released"))
      broken.push(
        `machine ${h.handle} (key ${key}) exists, but mu neither records it nor has an intent for it`,
      );
  }
  const abandoned = abandonsKilled(o, s);
  for (const [key, j] of Object.entries(o.worldJobs)) {
    if (j.state !== "running" || pending.has(key) || forgotten.has(key)) continue;
    if (j.agent !== undefined && abandoned.has(j.agent)) continue;
    if (!o.muJobs.some((m) => m.key === key && m.state !== "stopped"))
      broken.push(`job ${key} runs, but mu neither records it nor has an intent for it`);
  }

  // Every record can be ended through verbs: once the last step, the
  // liveness check's plugin rm, has succeeded, no intent may be left that
  // names what no verb can reach any more.
  const verbs = s.steps.filter((st) => "mu" in st);
  const last = verbs[verbs.length - 1];
  const removed =
    last !== undefined &&
    last.exit === 0 &&
    String(last.mu).startsWith("plugin rm ") &&
    o.exits.length === verbs.length &&
    o.exits[verbs.length - 1] === 0;
  if (removed && o.pendingKeys.length > 0)
    broken.push(
      `mu holds intents no verb can end: ${o.pendingKeys.join(", ")} pending after the plugin was removed`,
    );
  // A writer killed before its rename leaves a temp of the database; the
  // next commit removes it (host/store/durable.ts), and the plugin rm committed last.
  if (removed && o.deadTemps.length > 0)
    broken.push(`a dead writer's temp outlived later commits: ${o.deadTemps.join(", ")}`);
  // Every agent was closed or forgotten before the plugin's removal: no
  // view may run on with nothing recording it (a close killed between its
  // stop and the view's kill must leave the pane for the next verb).
  if (removed && o.liveViews.length > 0)
    broken.push(`a view outlived its agent's close: ${o.liveViews.join(", ")}`);
  // Nor a worktree, once its host could be removed: one a verb said stays
  // (moved on since its collect, or let go by forget --abandon) is the
  // person's, named to them on that line.
  if (removed)
    for (const t of o.treesOnHosts ?? []) {
      const site = t.split("/").slice(2).join("/");
      if (!new RegExp(`tree ${site} (?:stays|was left) on `).test(o.output))
        broken.push(`a worktree outlived its agent and its host: ${t}`);
    }
  for (const l of o.lostCommits) broken.push(`a commit that returned was lost: ${l}`);
  for (const l of o.lostWork ?? []) broken.push(`an agent's committed work was lost: ${l}`);
  // A mu that exited by itself has stopped its plugins: their groups emptied
  // or were killed. And it kills a group only when the grace ran out: a
  // plugin that exits in time is never cut short, nor reported as broken.
  for (const p of o.outlived) broken.push(`a plugin process outlived the mu that stopped it: ${p}`);
  for (const p of o.muSlips) broken.push(`mu broke the protocol: ${p}`);
  const forced = o.output.match(/^mu: plugin: '[^']+' was still running .*$/m);
  if (forced && !outstaysGrace(s))
    broken.push(`mu killed a plugin group that exits within the grace: ${forced[0]}`);
  for (const d of o.deadViews) broken.push(`a reattach left no live view: ${d}`);
  for (const d of o.killedViews) broken.push(`a live agent's view was killed by another mu: ${d}`);
  for (const c of o.crossings)
    broken.push(`a call went to another instance than its subject's: ${c}`);
  for (const c of o.otherMachine)
    broken.push(`a call about a job went to another machine than the job's: ${c}`);
  // Whatever order concurrent commits came in, once no mu runs no record
  // may name what is gone: a verb that decided on one read and committed
  // in a later write would leave one (read-back.ts).
  for (const d of o.dangling) broken.push(`a record names what is gone: ${d}`);
  // A collect reports its own tree's work, and that work stays reachable
  // from a ref of the checkout, whatever other fetches ran into it.
  for (const c of o.wrongCollects) broken.push(`a collect reported what is not its own: ${c}`);
  // A reply naming another msgId or incarnation is never a success: the verb
  // that got it must not report the delivery made.
  for (const id of o.wrongReplies)
    if (new RegExp(`(sent|with) ${id} `).test(o.output))
      broken.push(
        `mu reported delivery ${id} made on a reply that names another msgId or incarnation`,
      );
  broken.push(...listedTwice(o.stdouts ?? []));
  // What the model of mu (sim/model/) allows, compared after every step.
  const model = modelDivergence(s, o);
  if (model) broken.push(`${model} (the model)`);
  if (o.dbProblem) broken.push(`mu's database does not read back: ${o.dbProblem}`);
  broken.push(...traceLeaks(s, o.traces ?? []));
  broken.push(...oversizeRequests(o.sent));

  const canary = s.env?.MU_PLUGIN_CANARY;
  if (canary) {
    const db = o.dbBytes ? Buffer.from(o.dbBytes).toString("latin1") : "";
    const places: [string, string][] = [
      ["a message mu sent the plugin", o.sent],
      ["mu's output", o.output],
      ["mu's database", db],
      ["a trace", (o.traces ?? []).join("\n")],
    ];
    for (const [where, text] of places) {
      const piece = canaryPiece(canary, text);
      if (piece !== undefined)
        broken.push(
          piece === canary ? `the canary is in ${where}` : `part of the canary is in ${where}`,
        );
    }
  }

  // A step ends by SIGKILL only where something was set to kill it.
  const mayDie = (s.world?.faults ?? []).some((f) => "killMu" in f.do);
  let step = 0;
  let killer = mayDie;
  for (const st of s.steps) {
    if ("world" in st) killer ||= (st.world.faults ?? []).some((f) => "killMu" in f.do);
    if (!("mu" in st)) continue;
    const code = o.exits[step];
    const signal = o.signals[step];
    step++;
    if (step > o.exits.length) break;
    if (signal === "SIGKILL") {
      if (!killer && !st.env?.MU_CRASH_AT && !st.env?.MU_TESTBED_POWER_CUT)
        broken.push(`step ${step} (${String(st.mu)}) was killed with nothing set to kill it`);
    } else if (code === null || code === undefined || !EXITS.includes(code))
      broken.push(`step ${step} (${String(st.mu)}) exited ${code}, outside mu's table`);
    // A liveness check (workloads.ts): mu must still be usable here. The
    // line names no step number, so a shrink keeps to the same failure.
    else if (st.exit !== undefined && code !== st.exit)
      broken.push(`mu is no longer usable: '${String(st.mu)}' exited ${code}, not ${st.exit}`);
  }
  return broken;
}
