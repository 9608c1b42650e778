import type { Database } from "sql.js";
import { DELIVERIES } from "../effects/decide.js";
import { intentsFor } from "../effects/journal.js";
import { guardRefusal } from "../effects/resolve.js";
import { RefusedError } from "../errors.js";
import type { Ports } from "../ports/types.js";
import { type AgentRow, agentOf, agentSubject, type JobRecord, jobOf } from "./records.js";

// What another mu can change about an agent between a verb's read and the
// commit of its effect's intent: the job may have been stopped or closed
// (and the name spawned again under a new key). Run in that commit.

type JobRef = Pick<JobRecord, "key" | "workstream" | "agent">;

function changed(j: JobRef, what: string): RefusedError {
  const close = `mu agent close ${j.agent} -w ${j.workstream}`;
  return new RefusedError(
    "agent.changed",
    "agent",
    `${j.workstream}/${j.agent}'s job ${j.key} was ${what} by another mu meanwhile; nothing was sent`,
    { hint: `see: mu agent read ${j.agent} -w ${j.workstream} (or ${close})` },
  );
}

/** The job is still recorded, not stopped, and no other mu's stop of it is pending: a stop or a delivery may still reach it. */
export function jobStillToStop(db: Database, j: JobRef): void {
  const cur = jobOf(db, j.workstream, j.agent);
  if (cur?.key !== j.key || cur.state === "stopped") throw changed(j, "stopped or closed");
  const other = intentsFor(db, agentSubject(j.workstream, j.agent)).some(
    (i) => i.method === "job.stop" && i.key === j.key,
  );
  if (other) throw changed(j, "being stopped");
}

/**
 * The name's job and row are still the ones a verb read before it waited:
 * the same job, in the same state, with no stop of it pending, and the row
 * in the same state naming the same view. A close, a forget or another
 * reattach in between changes one of them.
 */
export function agentAsRead(
  db: Database,
  j: JobRef & Pick<JobRecord, "state">,
  a: Pick<AgentRow, "state" | "pane" | "jobKey"> | undefined,
): boolean {
  const cur = jobOf(db, j.workstream, j.agent);
  if (cur?.key !== j.key || cur.state !== j.state) return false;
  if (
    intentsFor(db, agentSubject(j.workstream, j.agent)).some(
      (i) => i.method === "job.stop" && i.key === j.key,
    )
  )
    return false;
  const row = agentOf(db, j.workstream, j.agent);
  if (!a || !row) return !a && !row;
  return row.state === a.state && row.pane === a.pane && row.jobKey === a.jobKey;
}

/**
 * No live mu's delivery to the agent is on its way: a stop now would end
 * the turn it starts, after that mu said the message was sent.
 */
export function noDeliveryUnderWay(
  db: Database,
  j: JobRef,
  ports: Pick<Ports, "liveness" | "clock">,
): void {
  for (const i of intentsFor(db, agentSubject(j.workstream, j.agent)))
    if (DELIVERIES.includes(i.method) && ports.liveness.alive(i.writer))
      throw guardRefusal(i, "guard.writer-alive", i.writer, ports.clock.now());
}
