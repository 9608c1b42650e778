import type { Io } from "../cli/io.js";
import { deleteIntent, intentsFor } from "../effects/journal.js";
import { UnresolvedError } from "../effects/unresolved.js";
import { RefusedError, UnknownOutcomeError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { resolveAgent } from "../jobs/job-calls.js";
import { rollBackSpawn } from "../jobs/job-rules.js";
import { agentSubject, jobByKey } from "../jobs/records.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { withPlugins } from "./with-plugins.js";

// mu agent forget: a person's way out of a start no rule can ever resolve (a
// file-handle kind whose lookup says none, a start with no lookup past its
// dedupe window). The spec forbids mu to decide such an outcome itself, so it
// stays pending and holds its agent, host and plugin; the person who has
// looked at the machine ends mu's record of it here. The rules get their
// chance first: while any of them could still tell, forget refuses.

export async function agentForget(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const close = `mu agent close ${name} -w ${ws}`;
  const subject = agentSubject(ws, name);
  await withPlugins(io, async (sup) => {
    const { job } = await store.read((db) => findAgent(db, ws, name));
    const start = await store.read((db) =>
      intentsFor(db, subject).find((i) => i.method === "job.start" && i.key === job.key),
    );
    if (!start) {
      throw new RefusedError("forget.nothing", "agent", `${ws}/${name} has no pending start`, {
        hint: `forget ends only a start no rule can settle; end this agent with ${close}`,
      });
    }
    const stuck = await whyStuck(close, () =>
      resolveAgent(io, store, sup, ws, name, `mu agent forget ${name} -w ${ws}`),
    );
    if (!stuck || stuck.intentId !== start.id) {
      throw new RefusedError(
        "forget.settled",
        "agent",
        `the start of ${ws}/${name} (key ${start.key}) was settled by the rule table just now`,
        { hint: `nothing to forget; see mu agent read ${name} -w ${ws}, or end it with ${close}` },
      );
    }
    const forgot = await store.write((db) => {
      if (!intentsFor(db, subject).some((i) => i.id === start.id)) return undefined;
      const j = jobByKey(db, start.key);
      deleteIntent(db, start.id);
      rollBackSpawn(db, start.key, "unknown");
      return j;
    });
    if (!forgot) {
      throw new RefusedError(
        "forget.settled",
        "agent",
        `the start of ${ws}/${name} (key ${start.key}) was settled by another mu meanwhile`,
        { hint: `see mu agent read ${name} -w ${ws}` },
      );
    }
    io.err(`mu: journal: job.start for ${subject} (key ${start.key}): forgotten (${stuck.row})\n`);
    // A pane mu opened for it, if any, and deliveries that can now never be taken.
    const mux = muxFor(io.ports);
    for (const pane of await mux.panesOf(ws, name)) await mux.kill(pane);
    await resolveAgent(io, store, sup, ws, name, close);
    io.out(
      `forgot ${ws}/${name}: mu cannot know whether its job.start (key ${start.key}) started a job on ${forgot.host} (${stuck.row}); if one runs there, mu no longer tracks it: stop it yourself\n`,
    );
    if (forgot.taskId !== null) io.out(`task ${forgot.taskId} is open again\n`);
    if (forgot.firstMsgId !== null)
      io.out(`its first prompt ${forgot.firstMsgId} is recorded unknown\n`);
    if (forgot.site !== null)
      io.out(`its tree ${forgot.site} stays on ${forgot.host}; remove it with mu host exec\n`);
  });
}

/**
 * Lets the rule table try the agent's pending effects once more. Returns the
 * error of a start that stays pending for good; undefined when everything
 * was settled. A start the rules may still settle refuses forget (exit 4).
 */
async function whyStuck(
  close: string,
  resolve: () => Promise<void>,
): Promise<UnresolvedError | undefined> {
  try {
    await resolve();
    return undefined;
  } catch (err) {
    if (err instanceof UnresolvedError && err.forGood) return err;
    if (err instanceof UnknownOutcomeError) {
      throw new RefusedError(
        "forget.resolvable",
        "agent",
        `${err.message}; the rules may still settle it`,
        {
          hint: `forget ends only a start no rule can settle; run ${close} later, which settles it once the plugin can tell`,
        },
      );
    }
    throw err;
  }
}
