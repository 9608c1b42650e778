import type { Database } from "sql.js";

// Provider host records. A host's facts (deadlineAt, idleReclaimMs, maxJobs,
// and what host.status adds) are kept as one JSON object, patched by status.

export type HostState = "acquiring" | "ready" | "released" | "lost";

export interface HostRecord {
  name: string;
  plugin: string;
  instance: string;
  key: string;
  params: Record<string, string>;
  handle: string | null;
  state: HostState;
  facts: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export function getHost(db: Database, name: string): HostRecord | undefined {
  return listHosts(db, name)[0];
}

export function listHosts(db: Database, only?: string): HostRecord[] {
  const res = db.exec(
    `SELECT name, plugin, instance, key, params, handle, state, facts, created_at, updated_at FROM hosts${only === undefined ? "" : " WHERE name = ?"} ORDER BY name`,
    only === undefined ? [] : [only],
  );
  return (res[0]?.values ?? []).map((r) => ({
    name: String(r[0]),
    plugin: String(r[1]),
    instance: String(r[2]),
    key: String(r[3]),
    params: JSON.parse(String(r[4])) as Record<string, string>,
    handle: r[5] === null ? null : String(r[5]),
    state: String(r[6]) as HostState,
    facts: JSON.parse(String(r[7])) as Record<string, unknown>,
    createdAt: Number(r[8]),
    updatedAt: Number(r[9]),
  }));
}

export function putHost(db: Database, h: HostRecord): void {
  db.run(
    `INSERT INTO hosts (name, plugin, instance, key, params, handle, state, facts, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(name) DO UPDATE SET plugin = excluded.plugin, instance = excluded.instance, key = excluded.key,
       params = excluded.params, handle = excluded.handle, state = excluded.state, facts = excluded.facts,
       updated_at = excluded.updated_at`,
    [
      h.name,
      h.plugin,
      h.instance,
      h.key,
      JSON.stringify(h.params),
      h.handle,
      h.state,
      JSON.stringify(h.facts),
      h.createdAt,
      h.updatedAt,
    ],
  );
}

export function deleteHost(db: Database, name: string): void {
  db.run("DELETE FROM hosts WHERE name = ?", [name]);
}

/** Facts are a patch: an omitted fact keeps its value, a null clears it. */
export function patchFacts(
  facts: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...facts };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
