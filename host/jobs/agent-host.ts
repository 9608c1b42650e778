import type { Database } from "sql.js";
import { NotFoundError } from "../errors.js";
import { findLinkHost, type LinkHost } from "../hosts/link-host.js";
import { type AgentRow, agentOf, type JobRecord, jobOf } from "./records.js";

// An agent as the verbs after spawn find it: its job record, its row, and the
// host the job runs on.

export interface FoundAgent {
  job: JobRecord;
  agent: AgentRow | undefined;
  host: LinkHost;
}

export function findAgent(db: Database, ws: string, name: string): FoundAgent {
  const job = jobOf(db, ws, name);
  if (!job) {
    throw new NotFoundError("agent.unknown", "agent", `no agent ${ws}/${name}`, {
      hint: "see: mu agent list",
    });
  }
  return { job, agent: agentOf(db, ws, name), host: findLinkHost(db, job.host) };
}
