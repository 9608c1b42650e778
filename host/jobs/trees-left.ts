import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { RefusedError, UnavailableError } from "../errors.js";
import { findLinkHost } from "../hosts/link-host.js";
import type { Supervisor } from "../plugin/supervisor.js";
import { anotherLive } from "../ports/another-live.js";
import type { ProcessId } from "../ports/types.js";
import { openLink } from "../seams/link.js";
import type { Store } from "../store/index.js";
import { pauseAt } from "../testbed-pause.js";
import { TESTBED_BUILD } from "../testbed-plant.js";
import type { JobRecord } from "./records.js";
import { removeCollectedSite, siteRepo, TreeMovedOn } from "./site.js";

// A collected tree a close still owes its host's removal. The row is written
// in the same commit that deletes the job's record, so no moment passes with
// the tree on the host and nothing naming it, and it goes only once the tree
// is gone. A name's rows and a job of that name never stand together: a
// spawn of the name removes them first, so the close that `mu state` names
// for a row can close nothing else, and a new tree at the same path is never
// the one a row's removal meets.

export interface TreeLeft {
  jobKey: string;
  workstream: string;
  agent: string;
  host: string;
  plugin: string;
  site: string;
  /** The collected commit: the tree is removed only while its HEAD is still this. */
  sha: string;
  /** The mu removing it now, as an intent's resolver marks it. */
  resolver: ProcessId | null;
  createdAt: number;
  /**
   * A close after its collect, the taking back of a spawn that never
   * started, or a spawn that stopped the job it started when it did not come up.
   */
  leftBy: "close" | "spawn" | "spawn-stopped";
}

const COLS =
  "job_key, workstream, agent, host, plugin, site, sha, resolver_pid, resolver_start, created_at, left_by";

function treesWhere(db: Database, where: string, args: string[]): TreeLeft[] {
  const res = db.exec(`SELECT ${COLS} FROM trees_left WHERE ${where} ORDER BY created_at`, args);
  return (res[0]?.values ?? []).map((r) => ({
    jobKey: String(r[0]),
    workstream: String(r[1]),
    agent: String(r[2]),
    host: String(r[3]),
    plugin: String(r[4]),
    site: String(r[5]),
    sha: String(r[6]),
    resolver: r[7] === null ? null : { pid: Number(r[7]), start: String(r[8]) },
    createdAt: Number(r[9]),
    leftBy: r[10] === "spawn" || r[10] === "spawn-stopped" ? r[10] : "close",
  }));
}

export const treesLeftOf = (db: Database, ws: string, name: string): TreeLeft[] =>
  treesWhere(db, "workstream = ? AND agent = ?", [ws, name]);

export const allTreesLeft = (db: Database): TreeLeft[] => treesWhere(db, "1 = 1", []);

/**
 * Written in the commit that deletes the job's record: `sha` is the commit
 * its collect pinned, or for a spawn taken back the one its tree was made from.
 */
export function oweRemoval(
  db: Database,
  j: JobRecord,
  site: string,
  sha: string,
  now: number,
  leftBy: TreeLeft["leftBy"] = "close",
): void {
  db.run(
    `INSERT OR REPLACE INTO trees_left (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
    [j.key, j.workstream, j.agent, j.host, j.plugin, site, sha, now, leftBy],
  );
}

/** Who left the tree, as the lines about it say. */
export const whose = (t: TreeLeft): string =>
  t.leftBy === "close"
    ? `an earlier close of ${t.workstream}/${t.agent}`
    : `a spawn of ${t.workstream}/${t.agent} ${spawnThat(t.leftBy)}`;

/** What became of a spawn that left a tree: its job never ran, or ran and was stopped. */
export const spawnThat = (leftBy: "spawn" | "spawn-stopped"): string =>
  leftBy === "spawn" ? "that never started" : "that did not come up";

/** A provider's machine reported gone took its trees with it. */
export function dropTreesOn(db: Database, host: string): void {
  db.run("DELETE FROM trees_left WHERE host = ?", [host]);
}

/** The live mu, other than this one, removing one of the rows, if any. */
export function removerOf(io: Io, rows: readonly TreeLeft[]): ProcessId | undefined {
  return rows.find((t) => anotherLive(io.ports.liveness, t.resolver))?.resolver ?? undefined;
}

/** A row of the name another mu is removing (or one a close wrote meanwhile): the verb is run again. */
export function removingRefusal(t: TreeLeft, by: ProcessId | undefined): RefusedError {
  const tree = `the tree ${t.site} ${whose(t)} left on ${t.host}`;
  return by
    ? new RefusedError("tree.removing", "agent", `mu pid ${by.pid} is removing ${tree}`, {
        hint: "wait for that mu to finish, then run the verb again",
      })
    : new RefusedError(
        "tree.left",
        "agent",
        `another mu closed ${t.workstream}/${t.agent} meanwhile, leaving ${tree}`,
        {
          hint: "run the verb again: it removes that tree first",
        },
      );
}

/**
 * Lets go of the trees the name is still owed the removal of, for a host
 * gone for good (every removal fails): the rows go in one commit, refused
 * while another live mu removes one. The trees stay, if they are still there.
 */
export function letGoTreesLeft(
  io: Io,
  store: Store,
  ws: string,
  name: string,
): Promise<TreeLeft[]> {
  return store.write((db) => {
    const rows = treesLeftOf(db, ws, name);
    const by = removerOf(io, rows);
    if (by) throw removingRefusal(rows.find((t) => t.resolver === by) as TreeLeft, by);
    db.run("DELETE FROM trees_left WHERE workstream = ? AND agent = ?", [ws, name]);
    return rows;
  });
}

export type TreeOutcome =
  /** `was`: the tree was there (a spawn taken back may never have made one). */
  | { t: TreeLeft; done: "removed"; was: boolean }
  /** Its HEAD moved on: it stays for good, and the row goes. */
  | { t: TreeLeft; done: "moved"; why: string }
  /** The host could not be reached or git failed: the row stays for the next try. */
  | { t: TreeLeft; done: "failed"; why: string };

/**
 * Removes the trees closes of the name left on their hosts, oldest first.
 * Each row is claimed in a commit first (refused, exit 4, while another
 * live mu holds it) and deleted only once its tree is gone.
 */
export async function removeTreesLeft(
  io: Io,
  store: Store,
  sup: Supervisor,
  ws: string,
  name: string,
): Promise<TreeOutcome[]> {
  const out: TreeOutcome[] = [];
  for (const read of await store.read((db) => treesLeftOf(db, ws, name))) {
    // The host is read only when paused there, so the point costs other runs nothing.
    if (TESTBED_BUILD && io.ports.env.MU_TESTBED_PAUSE === "trees.read") {
      const { reg } = await store.read((db) => findLinkHost(db, read.host));
      await pauseAt("trees.read", io.ports, sup, reg);
    }
    const t = await store.write((db) => {
      const cur = treesWhere(db, "job_key = ?", [read.jobKey])[0];
      if (!cur) return undefined;
      const by = removerOf(io, [cur]);
      if (by) throw removingRefusal(cur, by);
      const me = io.ports.liveness.self();
      db.run("UPDATE trees_left SET resolver_pid = ?, resolver_start = ? WHERE job_key = ?", [
        me.pid,
        me.start,
        cur.jobKey,
      ]);
      return cur;
    });
    // Another mu removed it since the read.
    if (!t) continue;
    const o = await removeOne(io, sup, store, t);
    if (o.done !== "failed")
      await store.write((db) => db.run("DELETE FROM trees_left WHERE job_key = ?", [t.jobKey]));
    out.push(o);
  }
  return out;
}

async function removeOne(io: Io, sup: Supervisor, store: Store, t: TreeLeft): Promise<TreeOutcome> {
  try {
    // The host's record outlives the row: rm refuses while a row names it.
    const h = await store.read((db) => findLinkHost(db, t.host));
    const repo = siteRepo(h);
    if (!repo) throw new Error(`host '${t.host}' names no repository now`);
    const link = await openLink(io, sup, t.host, h);
    const shaIs = t.leftBy === "close" ? "the collected commit" : "the commit it was made from";
    const was = await removeCollectedSite(link, repo, t.site, t.sha, shaIs);
    return { t, done: "removed", was };
  } catch (err) {
    const why = (err as Error).message;
    return err instanceof TreeMovedOn ? { t, done: "moved", why } : { t, done: "failed", why };
  }
}

/**
 * Says what became of each tree. A failed removal of `own` (the tree of the
 * job this close just collected) is a line, the close done; one an earlier
 * verb left is thrown (exit 5), since removing it was what the verb owed.
 * A tree that moved on stays, said on a line, except one an earlier verb
 * left before a spawn, which is refused (exit 4): its own tree would
 * replace that one. A spawn's own (its job ran, then was stopped) makes way
 * for nothing, so it is a line too.
 */
export function sayTrees(
  io: Io,
  verb: "close" | "spawn",
  outcomes: readonly TreeOutcome[],
  own?: string,
): void {
  const again = (t: TreeLeft) => `mu agent close ${t.agent} -w ${t.workstream}`;
  let failed: (TreeOutcome & { done: "failed" }) | undefined;
  for (const o of outcomes) {
    const { t } = o;
    if (o.done === "removed") {
      if (t.jobKey !== own && o.was)
        io.out(`removed the tree ${t.site} on ${t.host}, left by ${whose(t)}\n`);
    } else if (o.done === "moved" && verb === "spawn" && t.jobKey !== own) {
      // The new tree would take its path, and with it a commit no ref names.
      throw new RefusedError(
        "spawn.tree-moved",
        "agent",
        `the tree ${t.site} ${whose(t)} left on ${t.host} holds work no ref names (${o.why}), and this spawn's tree would take its path`,
        {
          hint: `spawn again to keep that commit under refs/mu/kept/ on ${t.host} and make the new tree, or first save it and remove the tree with mu host exec`,
        },
      );
    } else if (o.done === "moved")
      io.err(
        `mu: ${verb}: the tree ${t.site} stays on ${t.host} (${o.why}); save that commit and remove it with mu host exec, or a spawn of ${t.workstream}/${t.agent} keeps it under refs/mu/kept/ first\n`,
      );
    else if (t.jobKey === own)
      io.err(
        `mu: ${verb}: the tree ${t.site} stays on ${t.host} (${o.why}); mu state lists it: run ${again(t)} to remove it\n`,
      );
    else failed ??= o;
  }
  if (!failed) return;
  const { t, why } = failed;
  throw new UnavailableError(
    `${verb}.tree-left`,
    "host",
    `the tree ${t.site} ${whose(t)} left on ${t.host} is still there (${why})`,
    {
      hint: `mu state lists it; run ${again(t)} to remove it${verb === "spawn" ? ", then spawn again" : " again"} (if ${t.host} is gone for good: mu agent forget ${t.agent} --abandon -w ${t.workstream})`,
    },
  );
}
