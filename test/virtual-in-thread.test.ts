import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// Stryker runs the testbed in worker threads, where a thread may not move the
// process's working directory. The scenarios that run mu in a real directory
// (a step's cwd, a --worktree site, git fetched back into a checkout) must
// run there as they do anywhere else: mu takes its directory from its ports.
// The built engine runs in a real worker thread, as Stryker's would.

const ids = [
  // A spawn refused outside a checkout, and from one named by the step's cwd.
  "agent/worktree-refusals",
  // The tree made from the caller's checkout, its HEAD fetched back on close.
  "agent/worktree-collect",
  // The in-life collect after a settle, into the spawning checkout.
  "channel/in-life-collect",
  // mu host fetch from the step's cwd, through a --fetch template run in it.
  "link/fetch-by-template",
];

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { findScenarioFiles, loadScenario } = await import(workerData.load);
  const { runVirtual } = await import(workerData.run);
  const all = findScenarioFiles(workerData.scenarios).map(loadScenario);
  const out = {};
  for (const id of workerData.ids) {
    const s = all.find((x) => x.scenario === id);
    const r = s ? await runVirtual(s) : { ran: false, why: "no such scenario" };
    out[id] = r.ran ? (r.failure ?? "passed") : "not run: " + r.why;
  }
  parentPort.postMessage(out);
})().catch((err) => parentPort.postMessage({ error: String(err && err.stack) }));
`;

function runInThread(): Promise<Record<string, string>> {
  const dist = join(packageRoot(), "dist", "sim");
  return new Promise((done, fail) => {
    const w = new Worker(WORKER, {
      eval: true,
      workerData: {
        ids,
        scenarios: join(packageRoot(), "scenarios"),
        load: pathToFileURL(join(dist, "runner", "load.js")).href,
        run: pathToFileURL(join(dist, "virtual", "run-scenario.js")).href,
      },
    });
    w.once("message", (m) => {
      void w.terminate();
      done(m);
    });
    w.once("error", fail);
  });
}

describe("the virtual engine in a worker thread", () => {
  it("runs the scenarios that need a real directory, and they pass", async () => {
    const got = await runInThread();
    expect(got).toEqual(Object.fromEntries(ids.map((id) => [id, "passed"])));
  }, 300_000);
});
