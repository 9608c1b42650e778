import { check } from "./explore.js";
import { canaryFor } from "./invariants.js";
import { type Families, workload } from "./workloads.js";

// One of the explorer's worker processes (explore-pool.ts): it is handed a
// seed at a time and answers with what that run broke.

interface Ask {
  seed: number;
  env: Record<string, string>;
  families: Families;
}

process.on("message", (m: Ask) => {
  const s = workload(m.seed, { MU_PLUGIN_CANARY: canaryFor(m.seed), ...m.env }, m.families);
  check(s, m.seed % 10 === 0).then(
    (broken) => process.send?.({ seed: m.seed, broken }),
    (err: Error) => process.send?.({ seed: m.seed, broken: [`the run threw: ${err.message}`] }),
  );
});
