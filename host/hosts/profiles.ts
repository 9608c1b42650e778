import type { Database } from "sql.js";

// Host profiles on a plugin link: a name, the plugin, and how to fetch when
// the link cannot. The host's identity is plugin:<plugin>:<instance>.

export interface HostProfile {
  name: string;
  plugin: string;
  fetch: string | null;
  repo: string | null;
  maxSessions: number | null;
  instance: string;
  createdAt: number;
}

export function listProfiles(db: Database, only?: string): HostProfile[] {
  const res = db.exec(
    `SELECT name, plugin, fetch, repo, max_sessions, instance, created_at FROM host_profiles${only === undefined ? "" : " WHERE name = ?"} ORDER BY name`,
    only === undefined ? [] : [only],
  );
  return (res[0]?.values ?? []).map((r) => ({
    name: String(r[0]),
    plugin: String(r[1]),
    fetch: r[2] === null ? null : String(r[2]),
    repo: r[3] === null ? null : String(r[3]),
    maxSessions: r[4] === null ? null : Number(r[4]),
    instance: String(r[5]),
    createdAt: Number(r[6]),
  }));
}

export function getProfile(db: Database, name: string): HostProfile | undefined {
  return listProfiles(db, name)[0];
}

export function putProfile(db: Database, p: HostProfile): void {
  db.run(
    "INSERT INTO host_profiles (name, plugin, fetch, repo, max_sessions, instance, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    [p.name, p.plugin, p.fetch, p.repo, p.maxSessions, p.instance, p.createdAt],
  );
}

export function deleteProfile(db: Database, name: string): void {
  db.run("DELETE FROM host_profiles WHERE name = ?", [name]);
}

export const identity = (p: Pick<HostProfile, "plugin" | "instance">) =>
  `plugin:${p.plugin}:${p.instance}`;
