import type { World } from "../plugin/world.js";
import { messageCounts } from "../runner/counts.js";
import { seenTarget } from "../runner/scenario.js";

/**
 * A step's afterSeen on the virtual engine: the wait ends as the plugin
 * records the method's arrival (its n-th with `method#n`), so no timer can
 * run between that arrival and the step.
 */
export function arrivalWaiter(world: World): {
  received: (msg: Record<string, unknown>) => void;
  seen: (afterSeen: string) => Promise<void>;
} {
  const waiting: { method: string; n: number; done: () => void }[] = [];
  const arrivals = (method: string) => messageCounts(world.transcript(), "in")[method] ?? 0;
  return {
    received(msg) {
      for (const w of waiting.filter((x) => x.method === String(msg.method))) {
        if (arrivals(w.method) < w.n) continue;
        waiting.splice(waiting.indexOf(w), 1);
        w.done();
      }
    },
    seen(afterSeen) {
      const { method, n } = seenTarget(afterSeen);
      return arrivals(method) >= n
        ? Promise.resolve()
        : new Promise((done) => waiting.push({ method, n, done }));
    },
  };
}
