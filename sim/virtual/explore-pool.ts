import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

// Seeds run in N child processes, handed out in order. The answer is the one
// a single worker gives: the lowest seed that breaks an invariant, with every
// lower seed run and held. Past a broken seed no higher one is handed out;
// the ones already running finish, and a lower broken one among them wins.

export interface PoolResult {
  broken?: { seed: number; lines: string[] };
  /** Seeds run and held below the broken one (all of them when none broke). */
  held: number;
  /** The last seed handed out, for "--seed N goes on" after a time limit. */
  last: number | undefined;
}

const WORKER = fileURLToPath(new URL("./explore-worker.js", import.meta.url));

export async function runPool(
  seeds: readonly number[],
  workers: number,
  env: Record<string, string>,
  until: number,
  onRun?: (seed: number) => void,
): Promise<PoolResult> {
  let next = 0;
  let worst: { seed: number; lines: string[] } | undefined;
  let last: number | undefined;
  const held = new Set<number>();
  const one = (child: ChildProcess): Promise<void> =>
    new Promise((resolve, reject) => {
      const give = () => {
        const seed = seeds[next];
        if (seed === undefined || (worst && seed > worst.seed) || Date.now() >= until) {
          resolve();
          return;
        }
        next++;
        last = seed;
        onRun?.(seed);
        child.send({ seed, env });
      };
      child.on("message", (m: { seed: number; broken: string[] }) => {
        if (m.broken.length === 0) held.add(m.seed);
        else if (!worst || m.seed < worst.seed) worst = { seed: m.seed, lines: m.broken };
        give();
      });
      child.on("exit", (code) => reject(new Error(`an explorer worker exited ${code}`)));
      give();
    });
  const children = Array.from({ length: Math.max(1, workers) }, () =>
    fork(WORKER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] }),
  );
  try {
    await Promise.all(children.map(one));
  } finally {
    // SIGKILL: a worker holds nothing real (the virtual engine is all in
    // memory), and a SIGTERM would reach the signal handling of a mu running
    // in it, which stops its plugins and prints what they left unanswered.
    for (const c of children) {
      c.removeAllListeners("exit");
      c.kill("SIGKILL");
    }
  }
  const below = worst ? [...held].filter((s) => s < (worst as { seed: number }).seed) : [...held];
  return { ...(worst ? { broken: worst } : {}), held: below.length, last };
}
