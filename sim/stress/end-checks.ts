import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sqlJs } from "../../host/store/sqljs.js";
import { danglingRecords } from "../runner/dangling.js";
import { unreachableCollects } from "./collects.js";
import { HOSTS } from "./crew.js";
import { type MuRun, runMu } from "./run-mu.js";

// What must hold once the crew has stopped, whatever the races did: the
// records hold together, nothing is left pending, the world applied each
// effect at most once and runs no job, every commit a close reported
// collected is reachable from a ref in the checkout, and everything can be
// removed.

/** Effects the sim counts by key or msgId, which must never be applied twice. */
const ONCE = ["job.start:", "job.stop:", "channel.send:", "host.acquire:"];

export async function endChecks(
  dir: string,
  env: Record<string, string>,
  checkout: string,
  runs: readonly MuRun[],
): Promise<string[]> {
  const broken: string[] = [...unreachableCollects(checkout, runs)];
  const state = await runMu(["state", "--json"], env, 60_000);
  if (state.code !== 0) broken.push(`mu state exited ${state.code}: ${state.line}`);
  else if ((JSON.parse(state.stdout) as unknown[]).length > 0)
    broken.push(`mu state still lists pending effects: ${state.stdout.trim()}`);

  const SQL = await sqlJs();
  const db = new SQL.Database(readFileSync(join(env.MU_STATE_DIR as string, "mu.db")));
  try {
    broken.push(...danglingRecords(db));
    for (const row of db.exec(
      "SELECT workstream || '/' || name FROM agents WHERE state <> 'closed'",
    )[0]?.values ?? [])
      broken.push(`agent ${String(row[0])} is still open after its last close`);
  } finally {
    db.close();
  }

  const world = JSON.parse(readFileSync(join(dir, "world", "state.json"), "utf8")) as {
    effects: Record<string, number>;
    jobs: Record<string, { state: string; agent: string }>;
  };
  for (const [effect, n] of Object.entries(world.effects))
    if (n > 1 && ONCE.some((p) => effect.startsWith(p)))
      broken.push(`${effect} was applied ${n} times`);
  for (const [key, j] of Object.entries(world.jobs))
    if (j.state === "running") broken.push(`job ${key} of ${j.agent} still runs in the world`);

  // Last, everything the crew stood on must come away cleanly.
  for (const argv of [...HOSTS.map((h) => ["host", "rm", h]), ["plugin", "rm", "sim"]]) {
    const r = await runMu(argv, env, 60_000);
    if (r.code !== 0) broken.push(`mu ${argv.join(" ")} exited ${r.code}: ${r.line}`);
  }
  return broken;
}
