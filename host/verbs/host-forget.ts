import type { Io } from "../cli/io.js";
import { forgetStuck } from "../effects/forget.js";
import { intentsFor } from "../effects/journal.js";
import { resolveHost } from "../effects/resolve-host.js";
import { RefusedError } from "../errors.js";
import { deleteHost, getHost } from "../hosts/records.js";
import { openStore } from "../store/index.js";
import { hostOf } from "./provider-calls.js";
import { withPlugins } from "./with-plugins.js";

// mu host forget: ends an acquire no rule can ever resolve (no lookup and
// its dedupe window passed, no lookup and no dedupe at all, a none no fence
// or in-flight bound can prove), once the rules had their chance
// (host/effects/forget.ts). The host's record goes with it, so the host and
// its plugin can be removed; a machine the provider may hold is the
// person's to find.

export async function hostForget(io: Io, name: string): Promise<void> {
  const store = openStore(io.ports);
  const subject = `host:${name}`;
  const status = `mu host status ${name}`;
  await withPlugins(io, async (sup) => {
    const acquire = await store.read((db) =>
      intentsFor(db, subject).find((i) => i.method === "host.acquire"),
    );
    if (!acquire) {
      // A profile has no acquire to forget, and says so; a name mu knows not at all is not found.
      await hostOf(store, name);
      throw new RefusedError("forget.nothing", "host", `host '${name}' has no pending acquire`, {
        hint: `forget ends only an acquire no rule can settle; see ${status}`,
      });
    }
    const { row } = await forgetStuck(io, store, {
      label: "host",
      what: `the acquire of ${name}`,
      noun: "an acquire",
      intent: acquire,
      resolve: () => resolveHost(io, store, sup, name, `mu host forget ${name}`),
      later: status,
      look: status,
      drop: (db) => {
        // Only the record this acquire made (its key), and only while it is
        // still being acquired: a host that reads as acquired is not ours to drop.
        const h = getHost(db, name);
        if (h?.state === "acquiring" && h.key === acquire.key) deleteHost(db, name);
      },
    });
    io.out(
      `forgot ${name}: mu cannot know whether its host.acquire (key ${acquire.key}) made a machine at plugin ${acquire.plugin} (${row}); if the provider holds one under that key, mu no longer tracks it: release or delete it at the provider yourself\n`,
    );
  });
}
