import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Families } from "./workloads.js";

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
const PER_CHILD = 500;

export async function runPool(
  seeds: readonly number[],
  workers: number,
  env: Record<string, string>,
  until: number,
  onRun?: (seed: number) => void,
  families: Families = {},
): Promise<PoolResult> {
  let next = 0;
  let worst: { seed: number; lines: string[] } | undefined;
  let last: number | undefined;
  const held = new Set<number>();
  const live = new Set<ChildProcess>();
  const more = () => {
    const seed = seeds[next];
    return seed !== undefined && !(worst && seed > worst.seed) && Date.now() < until;
  };
  // One child runs at most PER_CHILD seeds: a run leaves some memory behind
  // outside the JavaScript heap (a few hundred KB), which thousands of runs
  // in one process add up to gigabytes.
  const one = (child: ChildProcess): Promise<void> =>
    new Promise((resolve, reject) => {
      let given = 0;
      const give = () => {
        if (!more() || given === PER_CHILD) {
          resolve();
          return;
        }
        const seed = seeds[next] as number;
        next++;
        given++;
        last = seed;
        onRun?.(seed);
        child.send({ seed, env, families });
      };
      child.on("message", (m: { seed: number; broken: string[] }) => {
        if (m.broken.length === 0) held.add(m.seed);
        else if (!worst || m.seed < worst.seed) worst = { seed: m.seed, lines: m.broken };
        give();
      });
      child.on("exit", (code) => reject(new Error(`an explorer worker exited ${code}`)));
      give();
    });
  // SIGKILL: a worker holds nothing real (the virtual engine is all in
  // memory), and a SIGTERM would reach the signal handling of a mu running
  // in it, which stops its plugins and prints what they left unanswered.
  const end = (c: ChildProcess) => {
    c.removeAllListeners("exit");
    c.kill("SIGKILL");
    live.delete(c);
  };
  const slot = async () => {
    while (more()) {
      const child = fork(WORKER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
      live.add(child);
      try {
        await one(child);
      } finally {
        end(child);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, slot));
  } finally {
    for (const c of [...live]) end(c);
  }
  const below = worst ? [...held].filter((s) => s < (worst as { seed: number }).seed) : [...held];
  return { ...(worst ? { broken: worst } : {}), held: below.length, last };
}
