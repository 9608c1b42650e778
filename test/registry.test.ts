import initSqlJs from "sql.js";
import { describe, expect, it } from "vitest";
import {
  channelHolder,
  putPlugin,
  REFERENCE_QUERIES,
  referencesTo,
} from "../host/plugin/registry.js";
import { MIGRATIONS } from "../host/store/migrations.js";

async function db() {
  const SQL = await initSqlJs();
  const d = new SQL.Database();
  for (const m of MIGRATIONS) d.exec(m);
  return d;
}

const rec = (name: string, channel?: string) => ({
  name,
  argv: [`/x/mu-plugin-${name}`],
  declaration: { protocol: 1, seams: channel ? { channel: { name: channel, caps: {} } } : {} },
  instance: "i",
  version: "1",
  addedAt: 0,
  updatedAt: 0,
});

describe("registry", () => {
  it("finds which other plugin holds a channel name", async () => {
    const d = await db();
    putPlugin(d, rec("a", "chat"));
    putPlugin(d, rec("b"));
    expect(channelHolder(d, "chat", "b")).toBe("a");
    expect(channelHolder(d, "chat", "a")).toBeUndefined();
  });

  it("counts every table that names a plugin, so rm can refuse", async () => {
    const d = await db();
    d.exec("CREATE TABLE hosts_t (plugin TEXT)");
    d.run("INSERT INTO hosts_t VALUES ('a'), ('a')");
    REFERENCE_QUERIES.push({
      what: "host profile(s)",
      sql: "SELECT count(*) FROM hosts_t WHERE plugin = ?",
    });
    try {
      expect(referencesTo(d, "a")).toEqual(["2 host profile(s)"]);
      expect(referencesTo(d, "b")).toEqual([]);
    } finally {
      REFERENCE_QUERIES.pop();
    }
    // The host and journal tables count too.
    d.run(
      "INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at) VALUES ('host:h', 'host.acquire', 'b', 'k', '{}', '', 'i', 1, 1, '1', 0)",
    );
    expect(referencesTo(d, "b")).toEqual(["1 pending effect(s)"]);
  });
});
