import { writeIntent } from "../../host/effects/journal.js";
import type { Store } from "../../host/store/index.js";
import { median } from "./measure.js";

/**
 * The median cost of one commit that writes one intent, over `rounds`
 * commits: the unit every store row of the bench compares.
 */
export async function medianCommitMs(store: Store, rounds: number): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    await store.write((db) => {
      writeIntent(db, {
        subject: "agent:w/a0",
        method: "job.stop",
        plugin: "p",
        key: `k${r}`,
        params: { key: `k${r}` },
        instance: "i",
        pgid: 1,
        writer: { pid: process.pid, start: "s" },
        writtenAt: 0,
      });
    });
    times.push(performance.now() - t0);
  }
  return median(times);
}
