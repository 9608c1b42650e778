import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { openStore } from "../store/index.js";

interface PluginRow {
  name: string;
  argv: string[];
  instance: string | null;
  seams: string[];
}

export async function pluginList(io: Io, opts: { json?: boolean }): Promise<void> {
  const store = openStore(io.ports);
  const rows = await store.read((db) => {
    const res = db.exec("SELECT name, argv, declaration, instance FROM plugins ORDER BY name");
    const out: PluginRow[] = [];
    for (const [name, argv, decl, instance] of res[0]?.values ?? []) {
      const declaration = JSON.parse(String(decl ?? "{}")) as { seams?: Record<string, unknown> };
      out.push({
        name: String(name),
        argv: JSON.parse(String(argv)) as string[],
        instance: instance === null ? null : String(instance),
        seams: Object.keys(declaration.seams ?? {}),
      });
    }
    return out;
  });
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
    io.out(`${r.name}\t${r.instance ?? "-"}\t${r.seams.join(",")}\t${r.argv.join(" ")}\n`);
  }
}
