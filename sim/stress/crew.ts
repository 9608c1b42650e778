import { collectedBy, doWork, treeOf } from "./collects.js";
import { type MuRun, runMu } from "./run-mu.js";

// What a crew does to mu, many invocations at once: each agent cycles
// through spawn, a few turns (send, wait, read), a script on its host and a
// close (every other spawn in a worktree of the checkout, where it commits
// work of its own that the close must collect, beside a mu host fetch), while a second hand churns what the agents stand on: it removes
// and re-adds one of their hosts, and adds and removes a plugin and a
// profile on it, racing every verb the agents run.

export interface CrewPlan {
  agents: number;
  seconds: number;
  env: Record<string, string>;
  /** The argv that registers plugin `extra` (a link-only sim of its own), after `--`. */
  extraArgv: string[];
  /** The git checkout every mu runs in: --worktree spawns come from it, closes collect into it. */
  checkout: string;
  /** The sim's world directory, where the hosts' trees are. */
  world: string;
}

/** A run whose exit code the plan did not allow. */
export interface Unexpected {
  run: MuRun;
  allowed: number[];
}

export interface CrewLog {
  runs: MuRun[];
  unexpected: Unexpected[];
  /** Two verbs that exclude each other and both exited 0. */
  bothWon: string[];
  /** A close that reported another commit than the one its agent made. */
  wrongCollect: string[];
}

/** How often a verb is run again when its refusal says to. */
const RETRIES = 6;

/**
 * A refusal that promises nothing was lost and asks for the verb again: the
 * database lock held past its bound (exit 5), or an effect still in another
 * live mu's hands (exit 4).
 */
function sayRunAgain(r: MuRun): boolean {
  return (
    (r.code === 5 && r.line.includes("the database lock")) ||
    (r.code === 4 && r.line.includes("still in the hands of mu pid"))
  );
}

/** Far past any verb's own bound (a 60 s wait, a 10 s lock): a run past it hung. */
const HANG_MS = 120_000;

export const HOSTS = ["box0", "box1"] as const;
/** The host the churn removes and re-adds under the agents. */
const CHURNED = "box1";

export async function runCrew(plan: CrewPlan): Promise<CrewLog> {
  const log: CrewLog = { runs: [], unexpected: [], bothWon: [], wrongCollect: [] };
  const until = Date.now() + plan.seconds * 1000;
  const mu = async (argv: string[], allowed: number[] = [0]): Promise<MuRun> => {
    for (let attempt = 1; ; attempt++) {
      const r = await runMu(argv, plan.env, HANG_MS, plan.checkout);
      log.runs.push(r);
      // A clear refusal that says to run the verb again is followed, as a
      // person would: the figures count it, the invariants judge what the
      // retries leave behind.
      if (sayRunAgain(r) && attempt < RETRIES) {
        await new Promise((res) => setTimeout(res, 250 * attempt));
        continue;
      }
      if (r.code === null || !allowed.includes(r.code)) log.unexpected.push({ run: r, allowed });
      return r;
    }
  };
  const agents = Array.from({ length: plan.agents }, (_, i) =>
    agentLoop(mu, `a${i}`, HOSTS[i % HOSTS.length] as string, until, plan, log),
  );
  await Promise.all([...agents, churnLoop(mu, plan.extraArgv, until, log.bothWon)]);
  return log;
}

type Mu = (argv: string[], allowed?: number[]) => Promise<MuRun>;

async function agentLoop(
  mu: Mu,
  name: string,
  host: string,
  until: number,
  plan: CrewPlan,
  log: CrewLog,
): Promise<void> {
  let cycle = 0;
  while (Date.now() < until) {
    cycle++;
    const worktree = cycle % 2 === 1;
    // The churn may have the host removed right now: a refusal to spawn on a
    // host that is not there (3) is the race lost cleanly, tried again later.
    const spawned = await mu(
      ["agent", "spawn", name, "--host", host, ...(worktree ? ["--worktree"] : [])],
      [0, 3],
    );
    if (spawned.code !== 0) continue;
    const turns = 1 + (cycle % 2);
    for (let t = 0; t < turns; t++) {
      const sent = await mu(["agent", "send", name, `cycle ${cycle} turn ${t}`]);
      if (sent.code !== 0) continue;
      await mu(["wait", name, "--timeout", "60"]);
      await mu(["agent", "read", name]);
    }
    if (cycle % 3 === 0) await mu(["host", "exec", host, "--", "true"]);
    const made = worktree
      ? await doWork(treeOf(plan.world, host, name), `${name} cycle ${cycle}`)
      : null;
    // Another mu fetching into the same checkout while the closes collect.
    const fetch = worktree && cycle % 4 === 1 ? mu(["host", "fetch", host]) : undefined;
    const closed = await mu(["agent", "close", name]);
    await fetch;
    const got = collectedBy(closed);
    if (made !== null && closed.code === 0 && got !== made)
      log.wrongCollect.push(
        `mu agent close ${name} reported ${got}, its agent's commit is ${made}`,
      );
  }
}

async function churnLoop(
  mu: Mu,
  extraArgv: string[],
  until: number,
  bothWon: string[],
): Promise<void> {
  while (Date.now() < until) {
    // Held by an agent most of the time (4); free between an agent's close
    // and its next spawn, when the rm must win cleanly and the spawn lose.
    const rm = await mu(["host", "rm", CHURNED], [0, 4]);
    if (rm.code === 0) await mu(["host", "add", CHURNED, "--plugin", "sim", "--repo", "seeded"]);
    // A plugin of its own, whose profile is added while the plugin is removed:
    // one of the two wins, and never both.
    await mu(["plugin", "add", "extra", "--", ...extraArgv]);
    const [add, rmPlugin] = await Promise.all([
      mu(["host", "add", "extra-box", "--plugin", "extra", "--repo", "seeded"], [0, 3]),
      mu(["plugin", "rm", "extra"], [0, 4]),
    ]);
    if (add.code === 0 && rmPlugin.code === 0) bothWon.push("host add extra-box / plugin rm extra");
    // Whichever won, the other is left to clean up, in the order rm allows.
    if (add.code === 0) await mu(["host", "rm", "extra-box"], [0, 3]);
    if (rmPlugin.code !== 0) await mu(["plugin", "rm", "extra"]);
  }
}
