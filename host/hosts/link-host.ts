import type { Database } from "sql.js";
import { NotFoundError, RefusedError } from "../errors.js";
import { getPlugin } from "../plugin/registry.js";
import type { Registration } from "../plugin/supervisor.js";
import { getProfile, type HostProfile } from "./profiles.js";
import { getHost, type HostRecord } from "./records.js";

// A host reached through a plugin link, whether a --plugin profile or a
// provider's machine: which plugin, which instance it is recorded under, and
// the target.host every link call about it carries.

export interface LinkHost {
  reg: Registration;
  instance: string;
  target: { host: { name: string; instance: string; handle?: string } };
  /** Set for a provider's machine. */
  provider?: HostRecord;
  /** Set for a --plugin profile. */
  profile?: HostProfile;
}

export function findLinkHost(db: Database, name: string): LinkHost {
  const profile = getProfile(db, name);
  const provider = profile ? undefined : getHost(db, name);
  const rec = profile ?? provider;
  const plugin = rec ? getPlugin(db, rec.plugin) : undefined;
  if (!rec || !plugin)
    throw new NotFoundError("host.unknown", "host", `no host named '${name}'`, {
      hint: "see: mu host list",
    });
  const handle = provider?.handle;
  return {
    reg: { name: plugin.name, argv: plugin.argv, declaration: plugin.declaration },
    instance: rec.instance,
    target: { host: { name, instance: rec.instance, ...(handle ? { handle } : {}) } },
    ...(provider ? { provider } : {}),
    ...(profile ? { profile } : {}),
  };
}

/** Calls about a recorded host go only to the instance it was recorded under. */
export function sameInstance(
  name: string,
  plugin: string,
  recorded: string,
  now: string,
  profile = false,
): void {
  if (now !== recorded) {
    // A profile holds nothing but its settings, so re-adding it is a way
    // forward; a provider's machine belongs to the instance that made it.
    const back = "point the plugin back at that instance";
    throw new RefusedError(
      "effect.stop-changed",
      "host",
      `host '${name}' is recorded under instance '${recorded}', but '${plugin}' now answers as '${now}'; nothing was sent (stop-changed)`,
      {
        hint: profile
          ? `${back}, or take the new one: mu host rm ${name}, then mu host add ${name} --plugin ${plugin} (with its other flags again)`
          : back,
      },
    );
  }
}
