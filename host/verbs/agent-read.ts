import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { MuError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { fencedRead, jobPlugin, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { allAgents, jobOf } from "../jobs/records.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { withPlugins } from "./with-plugins.js";

// mu agent list and mu agent read (mu agent check: agent-check.ts). Liveness always comes from the job's
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
    // A dead view is no loss for a job that runs on: name the verb that opens a new one.
    const gone = r.state === "running" ? ` (gone: mu agent reattach ${r.agent})` : " (gone)";
    const view = r.view ? `${r.view}${r.viewAlive ? "" : gone}` : "-";
    io.out(`${r.agent}\t${r.host}\t${r.state}\t${view}${r.reason ? `\t${r.reason}` : ""}\n`);
  }
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
            lastError?: string;
          } | null)
        : null;
    if (opts.json) {
      printJson(io, {
        agent: ref,
        liveness,
        job: status,
        turn,
        lastText: last?.lastText ?? null,
        lastError: last?.lastError ?? null,
      });
      return;
    }
    const why = turn.reason ? ` (${turn.reason})` : "";
    io.out(
      `${ref}\t${liveness}\t${turn.state}${why}\truns=${turn.runs}\tinc=${turn.incarnation}\n`,
    );
    if (last?.lastError) io.out(`the last turn failed: ${last.lastError}\n`);
    if (last?.lastText) io.out(`${last.lastText}\n`);
  });
}
