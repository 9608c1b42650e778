import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { putPlugin } from "../../host/plugin/registry.js";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { measure, ratioTable } from "./measure.js";

// `npm run bench`: every number is a ratio against a baseline measured in
// the same run, so the report means the same on a busy machine as on an
// idle one. Nothing here fails a build; the goals are printed beside.

const runs = Number(process.env.MU_BENCH_RUNS ?? 15);
const root = packageRoot();
const mu = join(root, "dist/host/cli/main.js");
const state = mkdtempSync(join(tmpdir(), "mu-bench-"));

try {
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
      { name: "mu --version", argv: [process.execPath, mu, "--version"], env },
      { name: "mu plugin list", argv: [process.execPath, mu, "plugin", "list"], env },
    ],
    runs,
  );
  const table = ratioTable(samples, "node -e 0", { "mu --version": 3, "mu plugin list": 3 });
  const report = `# mu bench\n\nStart-up, ${runs} runs each, round-robin, medians.\n\n${table}\n`;
  process.stdout.write(report);
  mkdirSync(join(root, "reports"), { recursive: true });
  writeFileSync(join(root, "reports/bench.md"), report);
} finally {
  rmSync(state, { recursive: true, force: true });
}
