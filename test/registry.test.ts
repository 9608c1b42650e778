import initSqlJs from "sql.js";
import { describe, expect, it } from "vitest";
import { counted, pluginHolders } from "../host/hosts/holders.js";
import { channelHolder, putPlugin } from "../host/plugin/registry.js";
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

  it("holds a plugin by every table that names it, the one list rm refuses on", async () => {
    const d = await db();
    putPlugin(d, rec("a"));
    putPlugin(d, rec("b"));
    expect(pluginHolders(d, "a")).toEqual([]);
    d.run(
      "INSERT INTO host_profiles (name, plugin, fetch, repo, max_sessions, instance, created_at) VALUES ('box', 'a', NULL, NULL, NULL, 'i', 0), ('tpl', 'a', NULL, NULL, NULL, 'i', 0)",
    );
    d.run(
      "INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at) VALUES ('host:h', 'host.acquire', 'b', 'k', '{}', '', 'i', 1, 1, '1', 0)",
    );
    expect(counted(pluginHolders(d, "a"))).toBe("2 host profile(s)");
    expect(counted(pluginHolders(d, "b"))).toBe("1 pending effect(s)");
  });
});
