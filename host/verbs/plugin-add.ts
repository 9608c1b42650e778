import type { Io } from "../cli/io.js";
import { witnessOf } from "../effects/forgettable.js";
import { RefusedError } from "../errors.js";
import { freeingHint, pluginHolders, waitHint } from "../hosts/holders.js";
import { declarationOf } from "../plugin/load-rules.js";
import { channelHolder, getPlugin, putPlugin } from "../plugin/registry.js";
import { checkPluginName } from "../plugin/trust.js";
import { openStore } from "../store/index.js";
import { withPlugins } from "./with-plugins.js";

export async function pluginAdd(io: Io, name: string, argv: string[]): Promise<void> {
  checkPluginName(name);
  const store = openStore(io.ports);
  const existing = await store.read((db) => getPlugin(db, name));
  if (existing && JSON.stringify(existing.argv) !== JSON.stringify(argv)) {
    throw new RefusedError(
      "registration.argv",
      "plugin",
      `'${name}' is registered with another argv: ${existing.argv.join(" ")}`,
      {
        hint: `remove it first: mu plugin rm ${name}`,
      },
    );
  }
  // Trust and the load rules run here exactly as at every later start; the
  // recorded declaration is not compared, since add is what records it.
  const hello = await withPlugins(io, async (sup) => (await sup.ready({ name, argv })).hello);
  const now = io.ports.clock.now();
  await store.write((db) => {
    const channel = hello.seams.channel?.name;
    const holder = channel === undefined ? undefined : channelHolder(db, channel, name);
    if (holder !== undefined) {
      throw new RefusedError(
        "registration.channel",
        "plugin",
        `'${name}' declares channel '${channel}', which plugin '${holder}' already holds`,
        {
          hint: "a channel name belongs to one plugin; rename one of the channels",
        },
      );
    }
    // A re-add is a load: what the DB still records against this plugin is
    // what the registration needs, so a declaration that drops a seam one of
    // them calls on is refused and the recorded one stays.
    const short = pluginHolders(db, name, witnessOf(io.ports)).filter((h) =>
      h.needs.some((s) => !hello.seams[s]),
    );
    const seam = short[0]?.needs.find((s) => !hello.seams[s]);
    if (seam !== undefined) {
      // While a live mu is at work on what needs the seam, its verbs are not the user's to run.
      const wait = waitHint(short, "the plugin add");
      const kept = "nothing was recorded; restore the seam";
      throw new RefusedError(
        "load.seam.missing",
        "plugin",
        `'${name}' refused (seam.missing): it no longer declares the '${seam}' seam, still needed by ${short.map((h) => h.what).join("; ")}`,
        {
          hint:
            wait === undefined
              ? freeingHint(short, false, `${kept}, or first free what needs it`)
              : `${kept}, or ${wait}`,
        },
      );
    }
    const prior = getPlugin(db, name);
    if (prior && JSON.stringify(prior.argv) !== JSON.stringify(argv)) {
      throw new RefusedError(
        "registration.argv",
        "plugin",
        `'${name}' was registered meanwhile with another argv`,
        {
          hint: `remove it first: mu plugin rm ${name}`,
        },
      );
    }
    putPlugin(db, {
      name,
      argv,
      declaration: declarationOf(hello),
      instance: hello.instance,
      version: hello.plugin.version,
      addedAt: prior?.addedAt ?? now,
      updatedAt: now,
    });
  });
  const seams = Object.keys(hello.seams).join(", ");
  io.out(
    `${existing ? "re-registered" : "registered"} ${name} ${hello.plugin.version} (instance ${hello.instance}; seams: ${seams})\n`,
  );
}
