import { NotFoundError, RefusedError } from "../errors.js";
import { sameInstance } from "../hosts/link-host.js";
import { getProfile } from "../hosts/profiles.js";
import { getHost, type HostRecord } from "../hosts/records.js";
import { getPlugin } from "../plugin/registry.js";
import type { Registration, Supervisor } from "../plugin/supervisor.js";
import type { Store } from "../store/index.js";

// What the provider host verbs share: the records and the plugin a host
// names, and the fence that sends a call only to the instance it was
// recorded under.

export async function registration(store: Store, plugin: string): Promise<Registration> {
  const rec = await store.read((db) => getPlugin(db, plugin));
  if (!rec)
    throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${plugin}'`, {
      hint: "see: mu plugin list",
    });
  return { name: rec.name, argv: rec.argv, declaration: rec.declaration };
}

export async function hostOf(store: Store, name: string): Promise<HostRecord> {
  const { h, profile } = await store.read((db) => ({
    h: getHost(db, name),
    profile: getProfile(db, name) !== undefined,
  }));
  if (!h && profile) {
    // Listed by mu host list, so "not found" would mislead.
    throw new RefusedError(
      "host.profile",
      "host",
      `host '${name}' was added with mu host add, not acquired from a provider: it has no acquire, status or release`,
      { hint: `check it with mu host check ${name}; remove it with mu host rm ${name}` },
    );
  }
  if (!h)
    throw new NotFoundError("host.unknown", "host", `no host named '${name}'`, {
      hint: "see: mu host list",
    });
  return h;
}

/** Calls that name a recorded host go only to the instance it was recorded under. */
export async function fenced(sup: Supervisor, reg: Registration, h: HostRecord) {
  const ready = await sup.ready(reg, ["host"]);
  sameInstance(h.name, reg.name, h.instance, ready.hello.instance);
  return ready;
}

export const target = (h: Pick<HostRecord, "name" | "handle" | "instance">) => ({
  host: { name: h.name, ...(h.handle ? { handle: h.handle } : {}), instance: h.instance },
});
