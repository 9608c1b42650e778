import { pick, type Rand, type Script } from "./workload-script.js";

// The end of every explorer workload: with no fault left, mu must still do
// everything a person relies on, and every record must be endable.

/**
 * mu stays usable, whatever came before: with no fault left, a new agent
 * (z, a name the workload never uses, so an agent it left unresolvable
 * does not stand in the way) spawns, takes a delivery of any kind and then a send, a wait on its settled
 * turn returns, and again, and every record can be ended through verbs.
 */
export function liveness(
  w: Script,
  r: Rand,
  atStart: boolean,
  next: () => number,
  turnMs: number,
  machine: boolean,
): void {
  // The profile may have been removed: add it back (refused when it is
  // there). On a provider, a new machine: the first may be lost.
  if (machine) w.must("host acquire --provider sim h2");
  else w.verb("host add box --plugin sim", false);
  const host = machine ? "h2" : "box";
  w.must(`agent spawn z --host ${host}${atStart ? ` --send first-${next()}` : ""}`);
  w.must(
    pick(r, [
      `agent send z live-${next()}`,
      `agent send z live-${next()} --steer`,
      `agent send z live-${next()} --fresh`,
      `agent command z compact --instructions live-${next()}`,
    ]),
  );
  w.must(`agent send z after-${next()}`);
  // Three queued turns must settle inside the virtual engine's 120 s a step:
  // with minute-long turns they cannot, so those runs do not wait.
  if (turnMs <= 300) {
    w.must("wait z --timeout 60");
    w.must("wait z --timeout 60");
  }
  w.must("agent close z");
  if (machine) w.must("host release h2");
  w.must(`host rm ${host}`);
  w.must("plugin rm sim");
}
