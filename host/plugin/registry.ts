import type { Database } from "sql.js";
import type { InitializeResult } from "../protocol/declaration.js";

// The plugins table: what `plugin add` recorded. A plugin is only ever run
// from the argv stored here; mu never looks for one anywhere else.

export interface PluginRecord {
  name: string;
  argv: string[];
  /** { protocol, seams }: what every later start must match. */
  declaration: { protocol: number; seams: InitializeResult["seams"] };
  instance: string;
  version: string;
  addedAt: number;
  updatedAt: number;
}

export function getPlugin(db: Database, name: string): PluginRecord | undefined {
  return listPlugins(db, name)[0];
}

export function listPlugins(db: Database, only?: string): PluginRecord[] {
  const res = db.exec(
    `SELECT name, argv, declaration, instance, version, added_at, updated_at FROM plugins${only === undefined ? "" : " WHERE name = ?"} ORDER BY name`,
    only === undefined ? [] : [only],
  );
  return (res[0]?.values ?? []).map(([name, argv, decl, instance, version, added, updated]) => ({
    name: String(name),
    argv: JSON.parse(String(argv)) as string[],
    declaration: JSON.parse(String(decl)) as PluginRecord["declaration"],
    instance: String(instance),
    version: String(version ?? ""),
    addedAt: Number(added),
    updatedAt: Number(updated),
  }));
}

export function putPlugin(db: Database, rec: PluginRecord): void {
  db.run(
    `INSERT INTO plugins (name, argv, declaration, instance, version, added_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(name) DO UPDATE SET argv = excluded.argv, declaration = excluded.declaration,
       instance = excluded.instance, version = excluded.version, updated_at = excluded.updated_at`,
    [
      rec.name,
      JSON.stringify(rec.argv),
      JSON.stringify(rec.declaration),
      rec.instance,
      rec.version,
      rec.addedAt,
      rec.updatedAt,
    ],
  );
}

export function deletePlugin(db: Database, name: string): void {
  db.run("DELETE FROM plugins WHERE name = ?", [name]);
}

/** The plugin, other than `except`, whose channel seam holds this name. */
export function channelHolder(db: Database, channel: string, except: string): string | undefined {
  return listPlugins(db).find(
    (p) => p.name !== except && p.declaration.seams.channel?.name === channel,
  )?.name;
}
