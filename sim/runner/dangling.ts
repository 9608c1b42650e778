import type { Database } from "sql.js";

// Records that name something no longer recorded: a profile, machine or
// intent whose plugin was removed, an agent's pending call whose host was,
// a job or live agent whose host was, a live agent whose job was, a job or
// live agent whose plugin was, and a job still running on a machine mu released (a record another acquire of the
// name would take over). Each is a record some verb would trip over for
// good; only a race lets one in, so none may be left once every mu has
// exited, whatever the order their commits came in. The explorer checks it
// after every run (sim/virtual/read-back.ts), the crew run at its end
// (sim/stress/).

const HOST_NAMES = "SELECT name FROM host_profiles UNION SELECT name FROM hosts";

const REFERENCES: { sql: string; line: (r: unknown[]) => string }[] = [
  {
    sql: "SELECT name, plugin FROM host_profiles WHERE plugin NOT IN (SELECT name FROM plugins)",
    line: ([n, p]) => `host ${n} names plugin ${p}, which is gone`,
  },
  {
    sql: "SELECT name, plugin FROM hosts WHERE plugin NOT IN (SELECT name FROM plugins)",
    line: ([n, p]) => `machine ${n} names plugin ${p}, which is gone`,
  },
  {
    sql: "SELECT method, subject, plugin FROM intents WHERE plugin NOT IN (SELECT name FROM plugins)",
    line: ([m, s, p]) => `a pending ${m} for ${s} names plugin ${p}, which is gone`,
  },
  {
    // An agent's calls carry its host in their target: settling one needs that host's record.
    sql: `SELECT method, subject, json_extract(params, '$.target.host.name') AS h FROM intents WHERE subject LIKE 'agent:%' AND h IS NOT NULL AND h NOT IN (${HOST_NAMES})`,
    line: ([m, s, h]) => `a pending ${m} for ${s} names host ${h}, which is gone`,
  },
  {
    sql: `SELECT workstream, agent, host FROM jobs WHERE host NOT IN (${HOST_NAMES})`,
    line: ([w, a, h]) => `the job of agent ${w}/${a} names host ${h}, which is gone`,
  },
  {
    sql: "SELECT workstream, agent, plugin FROM jobs WHERE plugin NOT IN (SELECT name FROM plugins)",
    line: ([w, a, p]) => `the job of agent ${w}/${a} names plugin ${p}, which is gone`,
  },
  {
    sql: `SELECT workstream, name, host FROM agents WHERE state <> 'closed' AND host NOT IN (${HOST_NAMES})`,
    line: ([w, n, h]) => `agent ${w}/${n} names host ${h}, which is gone`,
  },
  {
    sql: "SELECT workstream, name, job_key FROM agents WHERE state <> 'closed' AND job_key NOT IN (SELECT key FROM jobs)",
    line: ([w, n, k]) => `agent ${w}/${n} names job ${k}, which is gone`,
  },
  {
    sql: "SELECT workstream, name, channel_plugin FROM agents WHERE state <> 'closed' AND channel_plugin NOT IN (SELECT name FROM plugins)",
    line: ([w, n, p]) => `agent ${w}/${n} names channel plugin ${p}, which is gone`,
  },
  {
    sql: "SELECT j.workstream, j.agent, j.host FROM jobs j JOIN hosts h ON h.name = j.host WHERE h.state = 'released' AND j.state <> 'stopped'",
    line: ([w, a, h]) => `the job of agent ${w}/${a} still runs on machine ${h}, which mu released`,
  },
];

/** One line per record that names something gone; none when the records hold together. */
export function danglingRecords(db: Database): string[] {
  return REFERENCES.flatMap(({ sql, line }) => (db.exec(sql)[0]?.values ?? []).map(line));
}
