import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { putPlugin } from "../../host/plugin/registry.js";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { measure, ratioTable } from "./measure.js";
import { pluginVerbCost } from "./verb-call.js";

/**
 * mu's start-up against bare node, and its own cost around one plugin call:
 * the first part of `npm run bench`, runnable alone (`startup-main.js`) while
 * working on start-up.
 */
export async function startupReport(state: string, runs: number): Promise<string> {
  const mu = join(packageRoot(), "dist/host/cli/mu.cjs");
  // A realistic `plugin list`: a DB on disk with a few registered plugins.
  const env = { MU_STATE_DIR: state };
  const store = openStore(realPorts({ ...process.env, ...env }));
  await store.write((db) => {
    for (const name of ["alpha", "beta", "sim"]) {
      putPlugin(db, {
        name,
        argv: [`/opt/mu-plugin-${name}`],
        declaration: { protocol: 1, seams: {} },
        instance: "bench",
        version: "0.0.0",
        addedAt: 0,
        updatedAt: 0,
      });
    }
  });
  const samples = measure(
    [
      { name: "node -e 0", argv: [process.execPath, "-e", "0"] },
      // Context, no goal: what any script file costs over -e (reading it,
      // the module loader), the floor under every bin's start.
      { name: "node empty.mjs", argv: [process.execPath, emptyScript(state)] },
      { name: "mu --version", argv: [process.execPath, mu, "--version"], env },
      { name: "mu plugin list", argv: [process.execPath, mu, "plugin", "list"], env },
      // Context, no goal: sql.js alone opening the same file and reading the
      // plugins, the floor under every verb that reads the database (its
      // wasm is compiled afresh in each process: Node 20 caches no wasm).
      {
        name: "sql.js alone: open the database, read plugins",
        argv: [
          process.execPath,
          join(packageRoot(), "test/bench/sqljs-floor.mjs"),
          join(state, "mu.db"),
        ],
      },
    ],
    runs,
  );
  const table = ratioTable(samples, "node -e 0", { "mu --version": 1.3, "mu plugin list": 2 });
  return `${table}\n\n${codeCacheLine()}\n\n${await pluginVerbCost(state, runs)}`;
}

function emptyScript(dir: string): string {
  const file = join(dir, "empty.mjs");
  writeFileSync(file, "");
  return file;
}

/** Whether the bin starts from the build's code cache: without it every row above is slower. */
function codeCacheLine(): string {
  const loader = join(packageRoot(), "dist/host/cli/verb-bundle.js");
  const bundle = join(packageRoot(), "dist/mu/run-verb.cjs");
  const script = `const m = await import(${JSON.stringify(loader)}); process.stdout.write(m.loadBundle(${JSON.stringify(bundle)}).cache);`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  const use = r.status === 0 ? r.stdout : `unknown (${r.stderr.trim().split("\n")[0]})`;
  return `The CLI bundle's V8 code cache (docs/development.md): ${use}.`;
}
