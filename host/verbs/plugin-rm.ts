import type { Io } from "../cli/io.js";
import { witnessOf } from "../effects/forgettable.js";
import { NotFoundError, RefusedError } from "../errors.js";
import { counted, freeingHint, pluginHolders, waitHint } from "../hosts/holders.js";
import { deletePlugin, getPlugin } from "../plugin/registry.js";
import { openStore } from "../store/index.js";

export async function pluginRm(io: Io, name: string): Promise<void> {
  await openStore(io.ports).write((db) => {
    if (!getPlugin(db, name)) {
      throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${name}'`, {
        hint: "see: mu plugin list",
      });
    }
    // One list of what holds a plugin, the one a re-add checks its seams
    // against, read in the commit that would remove it.
    const holders = pluginHolders(db, name, witnessOf(io.ports));
    if (holders.length > 0) {
      throw new RefusedError(
        "plugin.in-use",
        "plugin",
        `'${name}' is still named by ${counted(holders)}`,
        { hint: waitHint(holders, `mu plugin rm ${name}`) ?? freeingHint(holders, true) },
      );
    }
    deletePlugin(db, name);
  });
  io.out(`removed ${name}\n`);
}
