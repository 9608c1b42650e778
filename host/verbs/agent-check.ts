import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { intentsFor } from "../effects/journal.js";
import { EXIT, type ExitCode, NotFoundError, UnknownOutcomeError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { fencedRead, jobPlugin, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { agentSubject, jobOf, receiptState } from "../jobs/records.js";
import { undeliveredAgain } from "../jobs/undelivered.js";
import { hasSegments, segmentGlob } from "../store/archive.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { finish } from "./agent-spawn.js";
import { takeOver } from "./spawn/record.js";
import { withPlugins } from "./with-plugins.js";

// mu agent check: what became of one delivery, by its msgId, from the
// channel's receipt while the job runs and from mu's own once it ended.

/** A delivery's state as `agent check` reports it, in text or JSON. */
interface Checked {
  agent: string;
  msgId: string;
  state: string;
  runs?: number;
  reason?: string;
}

/**
 * A delivery's state. For an at-start agent's first delivery whose start is
 * still unresolved, resolving the start is the answer: found opens the view
 * and is accepted with runs 0; unresolved is unreachable; a proven none rolls
 * the attempt back, and then the channel is asked like for any msgId. A msgId
 * mu has no record of sending to this agent is not found: mu never asks a
 * channel about a delivery it did not make.
 */
export async function agentCheck(
  io: Io,
  name: string,
  msgId: string,
  opts: { workstream?: string; json?: boolean },
): Promise<ExitCode> {
  const ws = opts.workstream ?? "main";
  const ref = `${ws}/${name}`;
  const store = openStore(io.ports);
  // A job already ended still leaves its deliveries to check: pending ones
  // are settled below, as every verb on the name does first, and mu's
  // receipt then answers. With neither a job nor anything of it, the name
  // has no agent.
  const { before, sentTo } = await store.read((db) => {
    const sent = sentBy(db, msgId);
    const pending = intentsFor(db, agentSubject(ws, name)).length > 0;
    const job = jobOf(db, ws, name);
    return {
      before: job || !(pending || sent === ref) ? findAgent(db, ws, name) : undefined,
      sentTo: sent,
    };
  });
  if (sentTo !== ref && before?.job.firstMsgId !== msgId) {
    const archived = (await hasSegments(io.ports, store.path))
      ? ` (old deliveries to ended jobs are archived in ${segmentGlob(store.path)})`
      : "";
    throw new NotFoundError(
      "agent.check.unknown-msg",
      "agent",
      sentTo === null
        ? `mu has no record of sending ${msgId} to ${ref}`
        : `${msgId} was sent to ${sentTo}, not ${ref}`,
      {
        hint:
          sentTo === null
            ? `check the id; see: mu agent read ${ref}${archived}`
            : `see: mu agent check ${sentTo} ${msgId}`,
      },
    );
  }
  const report = (c: Omit<Checked, "agent" | "msgId">, code: ExitCode): ExitCode => {
    const full: Checked = { agent: ref, msgId, ...c };
    if (opts.json) printJson(io, full);
    else {
      const runs = c.runs !== undefined ? ` runs=${c.runs}` : "";
      // An accepted delivery's reason is a footnote; any other state's is the why.
      const why = c.reason ? (c.state === "accepted" ? ` (${c.reason})` : `: ${c.reason}`) : "";
      io.out(`${c.state} ${msgId}${runs}${why}\n`);
    }
    return code;
  };
  return withPlugins(io, async (sup) => {
    try {
      await resolveAgent(io, store, sup, ws, name, `mu agent check ${ref} ${msgId}`);
    } catch (err) {
      if (!(err instanceof UnknownOutcomeError)) throw err;
      return report({ state: "unreachable", reason: err.message }, EXIT.unknownOutcome);
    }
    if (!before) {
      // No job is left to ask: what mu recorded is the answer.
      const state = (await store.read((db) => receiptState(db, msgId))) ?? "unknown";
      return state === "accepted"
        ? report({ state, reason: "by mu's receipt; its job has ended" }, EXIT.ok)
        : report(
            { state, reason: "its job has ended, so mu's receipt is all there is" },
            EXIT.unknownOutcome,
          );
    }
    const now = await store.read((db) =>
      jobOf(db, ws, name) ? findAgent(db, ws, name) : undefined,
    );
    if (now && now.job.firstMsgId === msgId && now.job.state === "running") {
      if (now.agent?.state !== "live") {
        const ctx = { io, store, sup, h: now.host, mux: muxFor(io.ports) };
        // Not under a spawn still at work on it: its view would be swept.
        await takeOver(io, store, now.job, now.agent);
        await finish(ctx, now.job, {}, "resumed");
      }
      return report({ state: "accepted", runs: 0 }, EXIT.ok);
    }
    const { host, job, agent } = now ?? before;
    const { hello } = await jobPlugin(sup, host, job);
    if (hello.seams.channel?.caps.receipt !== "exact") {
      // The channel keeps no receipts mu may ask for: what mu recorded is all there is.
      const state = await store.read((db) => receiptState(db, msgId));
      if (state === "accepted") return report({ state: "accepted" }, EXIT.ok);
      return report(
        state === undefined
          ? { state: "unknown", reason: "mu has no record of it" }
          : { state: String(state) },
        EXIT.unknownOutcome,
      );
    }
    const r = (
      await fencedRead(io, sup, host, job, "channel.receipt", {
        target: jobTarget(host, job, agent?.incarnation ?? 1),
        msgId,
      })
    ).result as { state: string; id: string; runs?: number; reason?: string };
    if (r.id !== msgId) {
      return report(
        { state: "unreachable", reason: `the channel answered about ${r.id} instead` },
        EXIT.unknownOutcome,
      );
    }
    if (r.state === "accepted") {
      return report(
        { state: "accepted", ...(r.runs !== undefined ? { runs: r.runs } : {}) },
        EXIT.ok,
      );
    }
    // mu recorded the channel's own definite reply: a channel that has since
    // forgotten it (a fresh session, a restart) does not take it back.
    if ((await store.read((db) => receiptState(db, msgId))) === "accepted") {
      return report(
        { state: "accepted", reason: `by mu's receipt; the channel now says ${r.state}` },
        EXIT.ok,
      );
    }
    const again = await store.read((db) => undeliveredAgain(db, msgId));
    const reason = again ? `not delivered; send it again: ${again}` : r.reason;
    return report({ state: r.state, ...(reason ? { reason } : {}) }, EXIT.unknownOutcome);
  });
}

/** Which agent (`ws/name`) mu's receipts say a msgId was sent to, or null. */
function sentBy(db: Database, msgId: string): string | null {
  const row = db.exec("SELECT workstream, agent FROM receipts WHERE msg_id = ?", [msgId])[0]
    ?.values[0];
  return row ? `${row[0]}/${row[1]}` : null;
}
