import type { World } from "../plugin/world.js";
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
  const arrivals = (method: string) =>
    world.transcript().filter((e) => e.dir === "in" && e.msg.method === method).length;
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
