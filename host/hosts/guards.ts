import type { Database } from "sql.js";
import { NotFoundError, RefusedError } from "../errors.js";
import { getPlugin } from "../plugin/registry.js";
import type { SeamName } from "../protocol/declaration.js";
import type { LinkHost } from "./link-host.js";
import { getProfile } from "./profiles.js";
import { getHost } from "./records.js";

// What another mu can take away between a verb's first read and its commit:
// the plugin or the host a change names. Each guard runs inside the write
// that commits the change (Store.guarded, or an effect's `before`), so the
// verb that loses a race refuses, and nothing is left naming what is gone.

export type Guard = (db: Database) => void;

const meanwhile = "removed by another mu since this verb began; nothing was recorded";

/**
 * The plugin is still registered, and still declares the seams the change
 * will call on: a re-add may have dropped one since the verb read it.
 */
export function pluginStill(name: string, seams: readonly SeamName[] = []): Guard {
  return (db) => {
    const rec = getPlugin(db, name);
    if (!rec)
      throw new NotFoundError(
        "plugin.unknown",
        "plugin",
        `no plugin named '${name}' (${meanwhile})`,
        { hint: "see: mu plugin list" },
      );
    const gone = seams.find((s) => !rec.declaration.seams[s]);
    if (gone !== undefined)
      throw new RefusedError(
        "load.seam.missing",
        "plugin",
        `'${name}' was re-added by another mu since this verb began, without the '${gone}' seam; nothing was recorded`,
        { hint: "see: mu plugin list" },
      );
  };
}

/**
 * The host is still the one the verb read: the same profile, or the same
 * provider record (its key names one acquire), on the same plugin.
 */
export function hostStill(
  name: string,
  was: Pick<LinkHost, "reg" | "provider" | "profile">,
): Guard {
  return (db) => {
    const profile = getProfile(db, name);
    const provider = profile ? undefined : getHost(db, name);
    const same = was.profile
      ? profile?.plugin === was.profile.plugin && profile.instance === was.profile.instance
      : provider?.plugin === was.reg.name && provider.key === was.provider?.key;
    if (same && getPlugin(db, was.reg.name)) return;
    throw new NotFoundError("host.unknown", "host", `no host named '${name}' (${meanwhile})`, {
      hint: "see: mu host list",
    });
  };
}
