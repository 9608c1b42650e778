import type { Io } from "../cli/io.js";
import { forgetStuck } from "../effects/forget.js";
import { intentsFor } from "../effects/journal.js";
import { RefusedError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { resolveAgent } from "../jobs/job-calls.js";
import { rollBackSpawn } from "../jobs/job-rules.js";
import { agentSubject, jobByKey } from "../jobs/records.js";
import { openStore } from "../store/index.js";
import { pauseAt } from "../testbed-pause.js";
import { TESTBED_BUILD } from "../testbed-plant.js";
import { muxFor } from "../view/mux.js";
import { withPlugins } from "./with-plugins.js";

// mu agent forget: ends a start no rule can ever resolve (a file-handle
// kind whose lookup says none, a start with no lookup past its dedupe
// window), once the rules had their chance (host/effects/forget.ts). The
// agent is closed, a --task's task reopened, the first prompt kept unknown.

export async function agentForget(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const close = `mu agent close ${name} -w ${ws}`;
  const subject = agentSubject(ws, name);
  const mux = muxFor(io.ports);
  await withPlugins(io, async (sup) => {
    const { job, host } = await store.read((db) => findAgent(db, ws, name));
    const start = await store.read((db) =>
      intentsFor(db, subject).find((i) => i.method === "job.start" && i.key === job.key),
    );
    if (!start) {
      throw new RefusedError("forget.nothing", "agent", `${ws}/${name} has no pending start`, {
        hint: `forget ends only a start no rule can settle; end this agent with ${close} (if no close can ever end it, its host gone for good: mu agent forget ${name} --abandon -w ${ws})`,
      });
    }
    // The panes are listed while the name is still held: once the commit
    // frees it another mu may spawn it again, and its new view is not ours.
    let panes: string[] = [];
    const { row, dropped: forgot } = await forgetStuck(io, store, {
      label: "agent",
      what: `the start of ${ws}/${name}`,
      noun: "a start",
      intent: start,
      resolve: () => resolveAgent(io, store, sup, ws, name, `mu agent forget ${name} -w ${ws}`),
      later: close,
      look: `mu agent read ${name} -w ${ws}, or end it with ${close}`,
      drop: (db) => {
        const j = jobByKey(db, start.key);
        rollBackSpawn(db, start.key, "unknown");
        return j;
      },
      beforeCommit: async () => {
        panes = await mux.panesOf(ws, name);
      },
    });
    if (TESTBED_BUILD) await pauseAt("forget.committed", io.ports, sup, host.reg);
    // A pane mu opened for it, if any, and deliveries that can now never be taken.
    for (const pane of panes) await mux.kill(pane);
    await resolveAgent(io, store, sup, ws, name, close);
    const on = forgot?.host ?? job.host;
    io.out(
      `forgot ${ws}/${name}: mu cannot know whether its job.start (key ${start.key}) started a job on ${on} (${row}); if one runs there, mu no longer tracks it: stop it yourself\n`,
    );
    if (!forgot) return;
    if (forgot.taskId !== null) io.out(`task ${forgot.taskId} is open again\n`);
    if (forgot.firstMsgId !== null)
      io.out(`its first prompt ${forgot.firstMsgId} is recorded unknown\n`);
    if (forgot.site !== null)
      io.out(`its tree ${forgot.site} stays on ${forgot.host}; remove it with mu host exec\n`);
  });
}
