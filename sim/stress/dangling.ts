import type { Database } from "sql.js";

// Records that name something no longer recorded: a job or an agent on a
// host that is neither a profile nor a provider's machine, a host, profile,
// job, agent or intent naming a plugin that is not registered. Each is a
// record some verb will trip over for good, and only a race lets one in.

const REFERENCES: { what: string; sql: string }[] = [
  {
    what: "job on a host that is gone",
    sql: `SELECT workstream || '/' || agent, host FROM jobs
          WHERE host NOT IN (SELECT name FROM hosts UNION SELECT name FROM host_profiles)`,
  },
  {
    what: "agent on a host that is gone",
    sql: `SELECT workstream || '/' || name, host FROM agents WHERE state <> 'closed'
          AND host NOT IN (SELECT name FROM hosts UNION SELECT name FROM host_profiles)`,
  },
  {
    what: "agent whose job is gone",
    sql: `SELECT workstream || '/' || name, job_key FROM agents WHERE state <> 'closed'
          AND job_key NOT IN (SELECT key FROM jobs)`,
  },
  {
    what: "job of a plugin that is gone",
    sql: "SELECT workstream || '/' || agent, plugin FROM jobs WHERE plugin NOT IN (SELECT name FROM plugins)",
  },
  {
    what: "agent of a channel plugin that is gone",
    sql: `SELECT workstream || '/' || name, channel_plugin FROM agents WHERE state <> 'closed'
          AND channel_plugin NOT IN (SELECT name FROM plugins)`,
  },
  {
    what: "host of a plugin that is gone",
    sql: "SELECT name, plugin FROM hosts WHERE plugin NOT IN (SELECT name FROM plugins)",
  },
  {
    what: "host profile of a plugin that is gone",
    sql: "SELECT name, plugin FROM host_profiles WHERE plugin NOT IN (SELECT name FROM plugins)",
  },
  {
    what: "pending effect of a plugin that is gone",
    sql: "SELECT method || ' ' || subject, plugin FROM intents WHERE plugin NOT IN (SELECT name FROM plugins)",
  },
];

/** One line per record that names something gone; none when the records hold together. */
export function danglingRecords(db: Database): string[] {
  const out: string[] = [];
  for (const { what, sql } of REFERENCES)
    for (const row of db.exec(sql)[0]?.values ?? [])
      out.push(`${what}: ${String(row[0])} names '${String(row[1])}'`);
  return out;
}
