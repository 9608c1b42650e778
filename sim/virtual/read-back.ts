import { basename, dirname } from "node:path";
import { allIntents } from "../../host/effects/journal.js";
import { listHosts } from "../../host/hosts/records.js";
import { agentOf, allJobs } from "../../host/jobs/records.js";
import { openStore } from "../../host/store/index.js";
import { dbPath } from "../../host/store/paths.js";
import { viewReadyMs } from "../../host/view/mux.js";
import { danglingRecords as namesGone } from "../runner/dangling.js";
import type { virtualMux } from "./mux.js";
import type { VirtualWorld } from "./ports.js";

// What a virtual run reads back after its steps, as a new mu would: the
// records in mu's database, and whether a reattached view lived.

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
  const ws = words.includes("-w") ? (words[words.indexOf("-w") + 1] ?? "main") : "main";
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
