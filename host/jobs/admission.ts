import type { Database } from "sql.js";
import { intentsFor } from "../effects/journal.js";
import { envMs, MS_VARIABLES } from "../env-ms.js";
import { HostDeadlineError, NotFoundError, RefusedError } from "../errors.js";
import type { HostRecord } from "../hosts/records.js";
import { agentOf, jobOf, jobsOnHost } from "./records.js";

// Step 2 of a spawn, inside the commit that writes the job record: a
// provider host admits a job only while ready, outside its deadline margin
// and under maxJobs; a --task spawn claims its task.

export const DEFAULT_DEADLINE_MARGIN_MS = MS_VARIABLES.MU_HOST_DEADLINE_MARGIN_MS.fallback;

export function deadlineMarginMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_HOST_DEADLINE_MARGIN_MS");
}

export function admit(db: Database, host: HostRecord, now: number, marginMs: number): void {
  if (host.state !== "ready") {
    throw new RefusedError("host.not-ready", "host", `host '${host.name}' is ${host.state}`, {
      hint: `see: mu host status ${host.name}`,
    });
  }
  // A release checked that nothing calls on the machine when it wrote its
  // intent; a job admitted after that would run on a machine being released.
  if (intentsFor(db, `host:${host.name}`).some((i) => i.method === "host.release")) {
    throw new RefusedError("host.releasing", "host", `host '${host.name}' is being released`, {
      hint: `see: mu host status ${host.name}`,
    });
  }
  const deadlineAt = host.facts.deadlineAt;
  if (typeof deadlineAt === "number" && now >= deadlineAt - marginMs) {
    throw new HostDeadlineError(
      "host.deadline",
      "host",
      `host '${host.name}' reaches its deadline at ${new Date(deadlineAt).toISOString()}, within the ${marginMs} ms margin, so it takes no new agent`,
      { hint: "spawn on another host; this one is draining" },
    );
  }
  const maxJobs = host.facts.maxJobs;
  const running = jobsOnHost(db, host.name).filter((j) => j.state !== "stopped").length;
  if (typeof maxJobs === "number" && running >= maxJobs) {
    throw new RefusedError(
      "host.full",
      "host",
      `host '${host.name}' already runs its ${maxJobs} jobs`,
      {
        hint: "close an agent there, or spawn on another host",
      },
    );
  }
}

export function claimTask(db: Database, id: string, by: string): void {
  const r = db.exec("SELECT state, claimed_by FROM tasks WHERE id = ?", [id])[0]?.values[0];
  if (!r) {
    throw new NotFoundError("task.unknown", "task", `no task named '${id}'`, {
      hint: "see: mu task list",
    });
  }
  if (r[0] === "claimed" && r[1] !== by) {
    // A closed agent keeps its claim (mu cannot tell whether the work was
    // done); only that agent, spawned again, takes the task up.
    const owner = String(r[1]);
    const [ws = "", name = ""] = owner.split("/");
    // An on-send spawn gets its agent's row only at its view, so a claimant
    // still being spawned has none yet: its job record says it is not closed,
    // and a spawn of it again would be refused.
    const job = jobOf(db, ws, name);
    const closed =
      (agentOf(db, ws, name)?.state ?? "closed") === "closed" &&
      (job === undefined || job.state === "stopped");
    const again = `spawn it again: mu agent spawn ${name} --host <host> --task ${id} -w ${ws}; or pick another task`;
    // A stopped job still owes its close's final collect, and a spawn of its
    // name is refused until that close is finished.
    const hint = !closed
      ? "pick another task"
      : job
        ? `${owner}'s close is unfinished (its job owes its final collect); to go on with the task, finish it: mu agent close ${name} -w ${ws}, then ${again}`
        : `${owner} is closed; to go on with the task, ${again}`;
    throw new RefusedError("task.claimed", "task", `task '${id}' is claimed by ${owner}`, { hint });
  }
  db.run("UPDATE tasks SET state = 'claimed', claimed_by = ? WHERE id = ?", [by, id]);
}
