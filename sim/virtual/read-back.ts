import { basename, dirname } from "node:path";
import { allIntents } from "../../host/effects/journal.js";
import { listHosts } from "../../host/hosts/records.js";
import { agentOf, allJobs } from "../../host/jobs/records.js";
import { openStore } from "../../host/store/index.js";
import { dbPath } from "../../host/store/paths.js";
import { viewReadyMs } from "../../host/view/mux.js";
import { danglingRecords as namesGone } from "../runner/dangling.js";
import { type Args, argv } from "../runner/scenario.js";
import type { virtualMux } from "./mux.js";
import type { VirtualWorld } from "./ports.js";

// What a virtual run reads back after its steps, as a new mu would: the
// records in mu's database, and whether a reattached view lived.

/** The workstream a verb's words name with -w, else main. */
export function workstreamOf(words: readonly string[]): string {
  return words.includes("-w") ? (words[words.indexOf("-w") + 1] ?? "main") : "main";
}

/**
 * After a reattach that exited 0: whether the view it recorded is dead once
 * the readiness window has passed (a reattach reported success
 * with a view that died a moment later). The explorer's check only; it lets
 * that window of virtual time pass.
 */
export async function viewDied(
  w: VirtualWorld,
  muxes: ReturnType<typeof virtualMux>,
  words: string[],
  env: Record<string, string>,
): Promise<string | undefined> {
  if (words[0] !== "agent" || words[1] !== "reattach" || !words[2]) return undefined;
  const ws = workstreamOf(words);
  const name = words[2];
  const ports = w.ports(env);
  await w.clock.run(ports.clock.sleep(viewReadyMs(ports.env)));
  const pane = await w.clock.run(
    openStore(ports).read((db) => agentOf(db, ws, name)?.pane ?? null),
  );
  const mux = muxes.sim?.(ports);
  if (!pane || !mux || (await mux.alive(pane))) return undefined;
  return `the view it recorded (${pane}) died within ${viewReadyMs(ports.env)} ms`;
}

/**
 * At a join: for each spawn or reattach of the runs that overlapped that
 * exited 0, the view its agent's row names, if the row is still live, must
 * still live once they all ended. A verb beside it may close the agent (the
 * row is then closed, not live), but none may kill a live agent's view: a
 * sweep by name after a commit that freed the name kills a new spawn's.
 * Skipped where the backend was told to let views die.
 */
export async function viewsKilledBeside(
  w: VirtualWorld,
  muxes: ReturnType<typeof virtualMux>,
  ran: readonly { words: string[]; env: Record<string, string>; exit: number | null }[],
): Promise<string[]> {
  if (ran.length < 2 || ran.some((r) => r.env.MU_MUX_SIM)) return [];
  const out: string[] = [];
  for (const r of ran) {
    const [verb, what, name] = r.words;
    if (r.exit !== 0 || verb !== "agent" || (what !== "spawn" && what !== "reattach") || !name)
      continue;
    const ws = workstreamOf(r.words);
    const ports = w.ports(r.env);
    const row = await w.clock.run(openStore(ports).read((db) => agentOf(db, ws, name) ?? null));
    const mux = muxes.sim?.(ports);
    if (row?.state !== "live" || !row.pane || !mux || (await mux.alive(row.pane))) continue;
    out.push(
      `'${r.words.join(" ")}' exited 0 and its agent is live, but its view ${row.pane} was killed by the time the verbs beside it ended`,
    );
  }
  return out;
}

/** What mu's database holds at the end, read as a new mu would; a store that does not open says why. */
export async function readBack(w: VirtualWorld): Promise<{
  intents: string[];
  hosts: { key: string; state: string; name: string }[];
  jobs: { key: string; state: string }[];
  problem?: string;
}> {
  try {
    return await w.clock.run(
      openStore(w.ports()).read((db) => {
        const check = db.exec("PRAGMA integrity_check")[0]?.values[0]?.[0];
        return {
          intents: allIntents(db).map((i) => i.key),
          hosts: listHosts(db).map((h) => ({ key: h.key, state: h.state, name: h.name })),
          jobs: allJobs(db).map((j) => ({ key: j.key, state: j.state })),
          ...(check === "ok" ? {} : { problem: `integrity_check says ${String(check)}` }),
        };
      }),
    );
  } catch (err) {
    return { intents: [], hosts: [], jobs: [], problem: (err as Error).message };
  }
}

type ReadBack = Awaited<ReturnType<typeof readBack>>;

/**
 * The machine restarted after a power cut in a verb, and the records that
 * cut lost: only those the verb does not itself act on, since its own
 * commits may or may not have happened (a re-acquire replaces a released
 * host, a close removes its job).
 */
export async function restartAfterCut(
  w: VirtualWorld,
  before: ReadBack,
  mu: Args,
): Promise<string[]> {
  w.fs.crashAfter(null);
  if (w.fs.down) w.fs.recover();
  const after = await readBack(w);
  const lost: string[] = [];
  const words = argv(mu);
  const verb = `'${String(mu)}'`;
  const named = new Set(words);
  for (const h of before.hosts)
    if (!named.has(h.name) && !after.hosts.some((x) => x.key === h.key))
      lost.push(`host ${h.key}, recorded before ${verb}, is gone after a power cut`);
  for (const j of before.jobs)
    if (!after.jobs.some((x) => x.key === j.key) && !words.includes("close"))
      lost.push(`job ${j.key}, recorded before ${verb}, is gone after a power cut`);
  return lost;
}

/** The records that name what is gone (sim/runner/dangling.ts), as the run left them. */
export async function danglingRecords(w: VirtualWorld): Promise<string[]> {
  try {
    return await w.clock.run(openStore(w.ports()).read(namesGone));
  } catch {
    // A database that does not read back is reported on its own (readBack).
    return [];
  }
}

/**
 * Temp files of mu's database whose writer no longer runs. A writer killed
 * between its temp and the rename leaves one; the next commit removes it
 * (host/store/durable.ts), so none may outlast a later commit.
 */
export function deadTemps(w: VirtualWorld): string[] {
  const ports = w.ports();
  const db = dbPath(ports.env);
  const prefix = `${basename(db)}.tmp-`;
  return w.fs.peekDir(dirname(db)).filter((f) => {
    if (!f.startsWith(prefix)) return false;
    const pid = Number(f.slice(prefix.length).split("-")[0]);
    return ports.liveness.startOf(pid) === null;
  });
}
