import type { Io } from "../cli/io.js";
import { witnessOf } from "../effects/forgettable.js";
import { NotFoundError, RefusedError } from "../errors.js";
import { freeingHint, pluginHolders } from "../hosts/holders.js";
import { deletePlugin, getPlugin, referencesTo } from "../plugin/registry.js";
import { openStore } from "../store/index.js";

export async function pluginRm(io: Io, name: string): Promise<void> {
  await openStore(io.ports).write((db) => {
    if (!getPlugin(db, name)) {
      throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${name}'`, {
        hint: "see: mu plugin list",
      });
    }
    const refs = referencesTo(db, name);
    if (refs.length > 0) {
      throw new RefusedError(
        "plugin.in-use",
        "plugin",
        `'${name}' is still named by ${refs.join(", ")}`,
        { hint: freeingHint(pluginHolders(db, name, witnessOf(io.ports)), true) },
      );
    }
    deletePlugin(db, name);
  });
  io.out(`removed ${name}\n`);
}
