import { type Io, printJson } from "../cli/io.js";
import { bounded, MAX_MS } from "../env-ms.js";
import { DeadlineEvent, EXIT, type ExitCode, UnavailableError } from "../errors.js";
import { deadlineMarginMs } from "../jobs/admission.js";
import { findAgent } from "../jobs/agent-host.js";
import { inLifeCollect } from "../jobs/in-life-collect.js";
import { fencedRead, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { agentOf, putAgent } from "../jobs/records.js";
import { agentRef } from "../names.js";
import { terminator } from "../plugin/terminator.js";
import { openStore } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { nextDeadline } from "./wait-deadline.js";
import {
  CLOSED_MEANWHILE,
  deadOutcome,
  isDead,
  type JobStatus,
  pollLiveness,
  type Watched,
} from "./wait-liveness.js";
import { withPlugins } from "./with-plugins.js";

// mu wait: one channel.watch per agent, each ended by its one notification
// (settled or restarted) or by mu's $/cancel; a notification that crosses
// the cancel is dropped by the connection. A provider host's deadline caps
// the wait: inside its margin mu fires an urgent deadline event (exit 7),
// once per host per deadline.

interface Outcome {
  agent: string;
  line: string;
  kind: "settled" | "restarted" | "dead" | "no-answer";
  /** What --json shows beside the kind. */
  facts?: Record<string, unknown>;
}

function parseTimeout(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  // Seconds, unlike the link verbs' milliseconds: a wait is for turns of minutes.
  const s = bounded(raw, {
    name: "--timeout",
    unit: "seconds",
    min: 0.001,
    max: MAX_MS / 1000,
    whole: false,
    example: 600,
    code: "wait.timeout",
  });
  return Math.round(s * 1000);
}

export async function wait(
  io: Io,
  names: string[],
  opts: { workstream?: string; timeout?: string; any?: boolean; json?: boolean },
): Promise<ExitCode> {
  const timeoutMs = parseTimeout(opts.timeout);
  // One wait may span workstreams: each name is `name` in -w's, or `<ws>/<name>`.
  // An agent named twice is waited on once.
  const refs = names
    .map((n) => agentRef(n, opts.workstream))
    .filter(
      (r, i, all) => all.findIndex((x) => x.workstream === r.workstream && x.name === r.name) === i,
    );
  const store = openStore(io.ports);
  const clock = io.ports.clock;
  return withPlugins(io, async (sup) => {
    for (const r of refs)
      await resolveAgent(io, store, sup, r.workstream, r.name, `mu wait ${r.workstream}/${r.name}`);
    const agents = await store.read((db) => refs.map((r) => findAgent(db, r.workstream, r.name)));
    const margin = deadlineMarginMs(io.ports.env);
    const deadline = await nextDeadline(store, agents, margin);
    const outcomes: Outcome[] = [];
    const open: Watched[] = [];
    const writes: Promise<unknown>[] = [];
    let wake: () => void = () => {};
    const woken = new Promise<void>((r) => {
      wake = r;
    });
    const done = () => (opts.any ? outcomes.length > 0 : outcomes.length === agents.length);
    for (const a of agents) {
      const { job, agent, host } = a;
      const label = `${job.workstream}/${job.agent}`;
      const target = jobTarget(host, job, agent?.incarnation ?? 1);
      // Liveness is the job's, never the channel's.
      const status = (await fencedRead(io, sup, host, job, "job.status", { target }))
        .result as JobStatus;
      if (isDead(status)) {
        outcomes.push(deadOutcome(label, status));
        continue;
      }
      const after = agent?.waitAfter ?? undefined;
      // The watch lives on the process that answered it: its notification comes there.
      const watched = await fencedRead(io, sup, host, job, "channel.watch", {
        target,
        ...(after !== undefined ? { afterRuns: after } : {}),
        ...(agent?.channelInc !== null && agent?.channelInc !== undefined
          ? { inc: agent.channelInc }
          : {}),
      });
      const proc = watched.proc;
      const r = watched.result as { watchId: string };
      open.push({
        label,
        job,
        host,
        target,
        watchId: r.watchId,
        cancel: () => proc.conn.cancelWatch(r.watchId),
      });
      // A plugin that stops (it exited, or broke the protocol) ends its watches
      // with no notification: the wait must not hang on them.
      void proc.child.exited.then(() => {
        const at = open.findIndex((w) => w.watchId === r.watchId);
        if (at === -1) return;
        open.splice(at, 1);
        outcomes.push({
          agent: label,
          line: terminator.terminating
            ? `${label} unknown (mu was interrupted before the turn settled)`
            : `${label} unknown (the plugin stopped before the turn settled)`,
          kind: "no-answer",
        });
        if (done()) wake();
      });
      // A restart starts the count again in the new incarnation. A settle
      // changes nothing: the next wait counts from the same delivery's
      // baseline, so the turn it reported answers it at once again.
      const record = (channelInc: number, waitAfter?: number) =>
        writes.push(
          store.write((db) => {
            // Only the row of the job waited on: another mu may have closed it
            // and spawned the name again meanwhile.
            const row = agentOf(db, job.workstream, job.agent);
            if (row?.jobKey === job.key)
              putAgent(db, { ...row, waitAfter: waitAfter ?? row.waitAfter, channelInc });
          }),
        );
      proc.conn.onWatch(r.watchId, (method, params) => {
        const o = params.observation as
          | { runs: number; lastText?: string; lastError?: string; incarnation: number }
          | undefined;
        if (method === "watch/settled" && o) {
          // A turn that failed still settled: the wait did its job (exit 0),
          // and the line says how the turn ended.
          const failed = o.lastError ? ` (the turn failed: ${o.lastError})` : "";
          outcomes.push({
            agent: label,
            line: `${label} settled runs=${o.runs}${failed}${o.lastText ? `: ${o.lastText}` : ""}`,
            kind: "settled",
            facts: { runs: o.runs, lastText: o.lastText ?? null, lastError: o.lastError ?? null },
          });
          // Only the incarnation is learnt (one a fresh left unknown, say).
          if (TESTBED_BUILD && planted(io.ports.env, "wait-uses-settle"))
            record(o.incarnation, o.runs);
          else if (o.incarnation !== agent?.channelInc) record(o.incarnation);
        } else {
          outcomes.push({
            agent: label,
            line: `${label} restarted (incarnation ${String(params.incarnation)})`,
            kind: "restarted",
            facts: { incarnation: params.incarnation },
          });
          record(Number(params.incarnation), 0);
        }
        const at = open.findIndex((w) => w.watchId === r.watchId);
        if (at !== -1) open.splice(at, 1);
        if (done()) wake();
      });
    }
    if (done()) wake();
    const liveness = pollLiveness(io, store, sup, open, (w, s) => {
      open.splice(open.indexOf(w), 1);
      w.cancel();
      outcomes.push(deadOutcome(w.label, s));
      if (done()) wake();
    });
    // The wait ends at the first of: every (or any) watch ended, the timeout,
    // the earliest host deadline margin.
    const limits: { at: number; why: "timeout" | "deadline" }[] = [];
    if (timeoutMs !== null) limits.push({ at: clock.now() + timeoutMs, why: "timeout" });
    if (deadline) limits.push({ at: deadline.at, why: "deadline" });
    limits.sort((x, y) => x.at - y.at);
    const first = limits[0];
    let ended: "done" | "timeout" | "deadline" = "done";
    if (first) {
      let timer: { cancel(): void } | undefined;
      const limited = new Promise<"timeout" | "deadline">((r) => {
        timer = clock.setTimer(Math.max(0, first.at - clock.now()), () => r(first.why));
      });
      ended = await Promise.race([woken.then(() => "done" as const), limited]);
      timer?.cancel();
    } else await woken;
    // The watches first, out of `open`: a liveness status still in flight is
    // cancelled next, which stops its plugin, and a watch left in `open`
    // would read that stop as its agent's.
    for (const w of open.splice(0)) w.cancel();
    await liveness.stop();
    // Recorded before the result is shown: a restart reported must not be
    // reported again by the next wait.
    await Promise.all(writes);
    const labels = agents.map((a) => `${a.job.workstream}/${a.job.agent}`);
    const unsettled = labels.filter((l) => !outcomes.some((o) => o.agent === l));
    if (opts.json) {
      printJson(io, {
        ended,
        outcomes: outcomes.map((o) => ({ agent: o.agent, outcome: o.kind, ...o.facts })),
        waiting: unsettled,
      });
    } else for (const o of outcomes) io.out(`${o.line}\n`);
    // After the result is printed: one in-life collect for each agent that
    // settled, or whose host's deadline fired.
    for (const a of agents) {
      const label = `${a.job.workstream}/${a.job.agent}`;
      const settled = outcomes.some((o) => o.agent === label && o.kind === "settled");
      if (settled || (ended === "deadline" && deadline?.agent === label)) {
        const fresh = await store.read((db) => findAgent(db, a.job.workstream, a.job.agent));
        await inLifeCollect(io, store, sup, fresh, margin);
      }
    }
    if (ended === "deadline" && deadline) {
      await store.write((db) =>
        db.run(
          "INSERT OR IGNORE INTO deadline_events (host, deadline_at, fired_at) VALUES (?, ?, ?)",
          [deadline.host, deadline.deadlineAt, clock.now()],
        ),
      );
      throw new DeadlineEvent(
        "wait.deadline",
        "deadline",
        `${deadline.agent} runs on host ${deadline.host}, which reaches its deadline at ${new Date(deadline.deadlineAt).toISOString()}`,
        {
          hint: `collect its work and close it: mu agent close ${deadline.agent}`,
        },
      );
    }
    if (ended === "timeout") {
      const waiting = agents.length - outcomes.length;
      throw new UnavailableError(
        "wait.timeout",
        "wait",
        `${waiting} of ${agents.length} agents did not settle within ${opts.timeout} s`,
        {
          hint: `wait again, or read ${unsettled.length === 1 ? "it" : "them"}: ${unsettled.map((l) => `mu agent read ${l}`).join("; ")}`,
        },
      );
    }
    const lost = outcomes.filter((o) => o.kind === "no-answer").map((o) => o.agent);
    if (lost.length > 0) {
      throw new UnavailableError(
        "wait.plugin-stopped",
        "wait",
        `the plugin stopped while ${lost.join(", ")} had not settled`,
        {
          hint: "see the plugin's stderr line above, if it left one, then wait again",
        },
      );
    }
    const deadOnes = outcomes.filter((o) => o.kind === "dead");
    const dead = deadOnes.map((o) => o.agent);
    if (dead.length > 0) {
      // Agents another mu closed meanwhile need no close.
      const closed = deadOnes.every((o) => o.facts?.reason === CLOSED_MEANWHILE);
      throw new UnavailableError(
        "wait.dead",
        "wait",
        `${dead.join(", ")} ${dead.length === 1 ? "is" : "are"} dead: its job ended or was lost`,
        {
          hint: closed
            ? "another mu closed it while this wait ran; nothing is left to do"
            : "read why with mu agent read, then close it with mu agent close",
        },
      );
    }
    return EXIT.ok;
  });
}
