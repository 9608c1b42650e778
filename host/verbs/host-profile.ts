import type { Io } from "../cli/io.js";
import { witnessOf } from "../effects/forgettable.js";
import { bounded } from "../env-ms.js";
import { NotFoundError, RefusedError, UsageError } from "../errors.js";
import { pluginStill } from "../hosts/guards.js";
import { freeingHint, heldBy, hostHolders, waitHint } from "../hosts/holders.js";
import { deleteProfile, getProfile, identity, putProfile } from "../hosts/profiles.js";
import { deleteHost, getHost } from "../hosts/records.js";
import { checkName } from "../names.js";
import { getPlugin } from "../plugin/registry.js";
import { openStore } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { withPlugins } from "./with-plugins.js";

export interface AddOptions {
  plugin?: string;
  fetch?: string;
  repo?: string;
  maxSessions?: string;
  shell?: string;
  exec?: string;
}

/** More channels than this is a typo, not a machine. */
const MAX_SESSIONS = 1000;

export async function hostAdd(io: Io, name: string, opts: AddOptions): Promise<void> {
  checkName("host name", name, "host.name");
  if (!opts.plugin) {
    throw new UsageError(
      "host.add.plugin",
      "usage",
      "a host needs --plugin: this mu adds hosts on a plugin link only",
      { hint: `use: mu host add ${name} --plugin <plugin> (mu plugin list shows them)` },
    );
  }
  if (opts.shell !== undefined || opts.exec !== undefined) {
    throw new UsageError(
      "host.add.plugin-shell",
      "usage",
      `a --plugin host takes no ${opts.shell !== undefined ? "--shell" : "--exec"}: the plugin is its link`,
    );
  }
  let maxSessions: number | null = null;
  if (opts.maxSessions !== undefined) {
    maxSessions = bounded(opts.maxSessions, {
      name: "--max-sessions",
      unit: "channels",
      min: 1,
      max: MAX_SESSIONS,
      whole: true,
      example: 4,
      code: "host.add.max-sessions",
    });
  }
  const store = openStore(io.ports);
  const reg = await store.read((db) => getPlugin(db, opts.plugin as string));
  if (!reg)
    throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${opts.plugin}'`, {
      hint: "see: mu plugin list",
    });
  const hello = await withPlugins(
    io,
    async (sup) =>
      (await sup.ready({ name: reg.name, argv: reg.argv, declaration: reg.declaration }, ["link"]))
        .hello,
  );
  const link = hello.seams.link;
  if (link && !link.fetch && opts.fetch === undefined) {
    throw new UsageError(
      "host.add.fetch",
      "usage",
      `plugin '${reg.name}' cannot fetch (its link declares fetch: false), so the host needs --fetch '<template>'`,
    );
  }
  // The plugin again in this commit: another mu may have removed it since.
  await store.guarded([pluginStill(reg.name, ["link"])], (db) => {
    if (getProfile(db, name) || getHost(db, name)) {
      throw new RefusedError("host.exists", "host", `a host named '${name}' already exists`, {
        hint: "pick another name, or see: mu host list",
      });
    }
    putProfile(db, {
      name,
      plugin: reg.name,
      fetch: opts.fetch ?? null,
      repo: opts.repo ?? null,
      maxSessions,
      instance: hello.instance,
      createdAt: io.ports.clock.now(),
    });
  });
  io.out(`added ${name} (${identity({ plugin: reg.name, instance: hello.instance })})\n`);
}

export async function hostRm(io: Io, name: string): Promise<void> {
  await openStore(io.ports).write((db) => {
    const profile = getProfile(db, name);
    const provider = profile ? undefined : getHost(db, name);
    if (!profile && !provider) {
      throw new NotFoundError("host.unknown", "host", `no host named '${name}'`, {
        hint: "see: mu host list",
      });
    }
    // Removing a host that agents, a pending effect or an acquired machine
    // still need would leave them unreachable and the plugin unremovable.
    const holders = hostHolders(db, name, witnessOf(io.ports)).filter(
      (h) => h.kind !== "agent" || !(TESTBED_BUILD && planted(io.ports.env, "host-rm-live-agents")),
    );
    if (holders.length > 0) {
      throw new RefusedError("host.rm.in-use", "host", `host '${name}' ${heldBy(holders)}`, {
        hint: waitHint(holders, `mu host rm ${name}`) ?? freeingHint(holders, false),
      });
    }
    if (provider) deleteHost(db, name);
    else deleteProfile(db, name);
  });
  io.out(`removed ${name}\n`);
}
