import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { EXIT, type ExitCode, MuError, UnknownOutcomeError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { fencedRead, jobPlugin, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { allAgents, jobOf, receiptState } from "../jobs/records.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { finish } from "./agent-spawn.js";
import { withPlugins } from "./with-plugins.js";

// mu agent list and mu agent check. Liveness always comes from the job's
// job.status: ended and lost read dead, unknown is never a death. A
// detached job whose view is gone keeps its row while it runs.

interface Listed {
  agent: string;
  host: string;
  kind: string;
  job: string;
  view: string | null;
  viewAlive: boolean;
  state: "running" | "dead" | "unknown" | "starting";
  reason?: string;
}

export async function agentList(io: Io, opts: { json?: boolean }): Promise<void> {
  const store = openStore(io.ports);
  const mux = muxFor(io.ports);
  const rows = await store.read((db) =>
    allAgents(db).flatMap((a) => {
      const j = jobOf(db, a.workstream, a.name);
      return j ? [{ a, found: findAgent(db, a.workstream, a.name) }] : [];
    }),
  );
  const out: Listed[] = [];
  await withPlugins(io, async (sup) => {
    for (const { a, found } of rows) {
      const { job, host } = found;
      const viewAlive = a.pane ? await mux.alive(a.pane) : false;
      const item: Listed = {
        agent: `${a.workstream}/${a.name}`,
        host: job.host,
        kind: job.kind,
        job: job.key,
        view: a.pane,
        viewAlive,
        state: job.state === "starting" ? "starting" : "unknown",
      };
      if (job.state === "running") {
        try {
          const s = (
            await fencedRead(io, sup, host, job, "job.status", {
              target: jobTarget(host, job, a.incarnation),
            })
          ).result as { state: string; reason?: string; exit?: number | null };
          item.state =
            s.state === "running" ? "running" : s.state === "unknown" ? "unknown" : "dead";
          if (s.reason) item.reason = s.reason;
          if (s.state === "ended") item.reason = `ended (exit ${s.exit ?? "unknown"})`;
        } catch (err) {
          item.reason = err instanceof MuError ? err.message : String(err);
        }
      }
      out.push(item);
    }
  });
  if (opts.json) {
    printJson(io, out);
    return;
  }
  if (out.length === 0) {
    io.out("no agents; spawn one with: mu agent spawn <name> --host <host>\n");
    return;
  }
  for (const r of out) {
    const view = r.view ? `${r.view}${r.viewAlive ? "" : " (gone)"}` : "-";
    io.out(`${r.agent}\t${r.host}\t${r.state}\t${view}${r.reason ? `\t${r.reason}` : ""}\n`);
  }
}

/**
 * A delivery's state. For an at-start agent's first delivery whose start is
 * still unresolved, resolving the start is the answer: found opens the view
 * and is accepted with runs 0; unresolved is unreachable; a proven none rolls
 * the attempt back, and then the channel is asked like for any msgId.
 */
export async function agentCheck(
  io: Io,
  name: string,
  msgId: string,
  opts: { workstream?: string },
): Promise<ExitCode> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const before = await store.read((db) => findAgent(db, ws, name));
  return withPlugins(io, async (sup) => {
    try {
      await resolveAgent(io, store, sup, ws, name, `mu agent check ${name} ${msgId} -w ${ws}`);
    } catch (err) {
      if (!(err instanceof UnknownOutcomeError)) throw err;
      io.out(`unreachable ${msgId}: ${err.message}\n`);
      return EXIT.unknownOutcome;
    }
    const now = await store.read((db) =>
      jobOf(db, ws, name) ? findAgent(db, ws, name) : undefined,
    );
    if (now && now.job.firstMsgId === msgId && now.job.state === "running") {
      if (now.agent?.state !== "live") {
        await finish(io, store, sup, now.host, muxFor(io.ports), now.job, {}, "resumed");
      }
      io.out(`accepted ${msgId} runs=0\n`);
      return EXIT.ok;
    }
    const { host, job, agent } = now ?? before;
    const { hello } = await jobPlugin(sup, host, job);
    if (hello.seams.channel?.caps.receipt !== "exact") {
      // The channel keeps no receipts mu may ask for: what mu recorded is all there is.
      const state = await store.read((db) => receiptState(db, msgId));
      const known = state ?? "unknown (mu has no record of it)";
      io.out(`${known === "accepted" ? "accepted" : known} ${msgId}\n`);
      return known === "accepted" ? EXIT.ok : EXIT.unknownOutcome;
    }
    const r = (
      await fencedRead(io, sup, host, job, "channel.receipt", {
        target: jobTarget(host, job, agent?.incarnation ?? 1),
        msgId,
      })
    ).result as { state: string; id: string; runs?: number; reason?: string };
    if (r.id !== msgId) {
      io.out(`unreachable ${msgId}: the channel answered about ${r.id} instead\n`);
      return EXIT.unknownOutcome;
    }
    if (r.state === "accepted") {
      io.out(`accepted ${msgId}${r.runs !== undefined ? ` runs=${r.runs}` : ""}\n`);
      return EXIT.ok;
    }
    // mu recorded the channel's own definite reply: a channel that has since
    // forgotten it (a fresh session, a restart) does not take it back.
    if ((await store.read((db) => receiptState(db, msgId))) === "accepted") {
      io.out(`accepted ${msgId} (by mu's receipt; the channel now says ${r.state})\n`);
      return EXIT.ok;
    }
    io.out(`${r.state} ${msgId}${r.reason ? `: ${r.reason}` : ""}\n`);
    return EXIT.unknownOutcome;
  });
}

interface Reading {
  state: string;
  since: number;
  runs: number;
  incarnation: number;
  reason?: string;
}

/**
 * One agent's reading: liveness from job.status, the turn from
 * channel.readStates (only the asked agent's entry counts; none is an
 * unknown turn), and the last settled turn from channel.lastRun.
 */
export async function agentRead(
  io: Io,
  name: string,
  opts: { workstream?: string; json?: boolean },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const ref = `${ws}/${name}`;
  const store = openStore(io.ports);
  await withPlugins(io, async (sup) => {
    await resolveAgent(io, store, sup, ws, name, `mu agent read ${name} -w ${ws}`);
    const { job, agent, host } = await store.read((db) => findAgent(db, ws, name));
    await jobPlugin(sup, host, job);
    const target = jobTarget(host, job, agent?.incarnation ?? 1);
    const call = async (method: string, params: Record<string, unknown>) =>
      (await fencedRead(io, sup, host, job, method, { target, ...params })).result;
    const status = (await call("job.status", {})) as {
      state: string;
      reason?: string;
      exit?: number | null;
    };
    const liveness =
      status.state === "running" ? "alive" : status.state === "unknown" ? "unknown" : "dead";
    const readings = (await call("channel.readStates", { targets: [ref] })) as Record<
      string,
      Reading
    >;
    const r = readings[ref];
    const turn: Reading = r ?? {
      state: "unknown",
      since: io.ports.clock.now(),
      runs: 0,
      incarnation: 0,
      reason: "the channel gave no reading for this agent",
    };
    const last =
      r && r.runs > 0
        ? ((await call("channel.lastRun", { afterRuns: r.runs - 1, inc: r.incarnation })) as {
            lastText?: string;
          } | null)
        : null;
    if (opts.json) {
      printJson(io, { agent: ref, liveness, job: status, turn, lastText: last?.lastText ?? null });
      return;
    }
    const why = turn.reason ? ` (${turn.reason})` : "";
    io.out(
      `${ref}\t${liveness}\t${turn.state}${why}\truns=${turn.runs}\tinc=${turn.incarnation}\n`,
    );
    if (last?.lastText) io.out(`${last.lastText}\n`);
  });
}
