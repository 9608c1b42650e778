import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { listPlugins } from "../plugin/registry.js";
import { openStore } from "../store/index.js";

interface PluginRow {
  name: string;
  argv: string[];
  instance: string;
  seams: string[];
  /** What its channel can do: the delivery verbs' refusals point here. */
  channelCaps?: Record<string, unknown>;
}

export async function pluginList(io: Io, opts: { json?: boolean }): Promise<void> {
  const rows = await openStore(io.ports).read((db) =>
    listPlugins(db).map(
      (p): PluginRow => ({
        name: p.name,
        argv: p.argv,
        instance: p.instance,
        seams: Object.keys(p.declaration.seams),
        ...(p.declaration.seams.channel
          ? { channelCaps: p.declaration.seams.channel.caps ?? {} }
          : {}),
      }),
    ),
  );
  if (opts.json) {
    printJson(io, rows);
    return;
  }
  if (rows.length === 0) {
    io.out(
      "no plugins registered; add one with: mu plugin add <name> -- /abs/path/mu-plugin-<name>\n",
    );
    return;
  }
  for (const r of rows) {
    io.out(`${r.name}\t${r.instance}\t${r.seams.join(",")}\t${r.argv.join(" ")}\n`);
  }
}
