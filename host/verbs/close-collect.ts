import type { Io } from "../cli/io.js";
import { crashPoint } from "../crash-point.js";
import { MuError, RefusedError, UnavailableError } from "../errors.js";
import { collectedRef, dropIfContained, inLifeRef } from "../git/fetch-place.js";
import { commitOf } from "../git/local.js";
import type { LinkHost } from "../hosts/link-host.js";
import { dropKilledView } from "../jobs/job-calls.js";
import { deleteJob, type JobRecord, jobByKey, putJob } from "../jobs/records.js";
import { oweRemoval } from "../jobs/trees-left.js";
import type { Supervisor } from "../plugin/supervisor.js";
import { DEFAULT_LINK_TIMEOUT_MS, fetchInto, openLink } from "../seams/link.js";
import type { Store } from "../store/index.js";

// A close's last step for a --worktree agent: its work fetched back into the
// checkout it was spawned from, then its record goes, its tree's removal owed.

/**
 * After job.stop: the tree's HEAD fetched back into the spawning checkout
 * under a ref of this job's own, then the tree and the record go. A failed
 * collect keeps both, stopped and owing, so the next close tries again (mu
 * state lists it meanwhile).
 */
export async function finalCollect(
  io: Io,
  store: Store,
  sup: Supervisor,
  h: LinkHost,
  j: JobRecord,
  killed: string | null,
): Promise<void> {
  const l = await openLink(io, sup, j.host, h);
  const site = j.site ?? ".";
  const repo = j.localRepo ?? io.ports.cwd;
  const ref = collectedRef(j.workstream, j.agent, j.key);
  await claimCollect(io, store, j.key);
  let sha: string;
  try {
    sha = await fetchInto(l, site, repo, ref, DEFAULT_LINK_TIMEOUT_MS);
  } catch (err) {
    // Another close of the name may have collected and removed the tree
    // while this one fetched: its record went only once the ref held the
    // work, so a fetch from the tree it removed has lost nothing.
    if (!(await store.read((db) => jobByKey(db, j.key)))) {
      const pinned = commitOf(repo, ref);
      throw new RefusedError(
        "close.closed-meanwhile",
        "agent",
        pinned
          ? `${j.workstream}/${j.agent} was closed by another mu while this close collected its work; that close pinned ${pinned} under ${ref} in ${repo}`
          : `${j.workstream}/${j.agent} was closed or forgotten by another mu while this close collected its work`,
        { hint: pinned ? `see: git -C ${repo} log -1 ${ref}` : "see: mu agent list" },
      );
    }
    // A failure on mu's side (git, a lock) names its own cause and remedy.
    const local = err instanceof MuError && err.label === "git" ? `${err.hint}; ` : "";
    throw new UnavailableError(
      "close.collect",
      "agent",
      `${j.workstream}/${j.agent} is stopped, but its final collect failed: ${(err as Error).message}`,
      {
        hint: `its work is still on ${j.host}; ${local}run mu agent close ${j.agent} -w ${j.workstream} again to retry`,
      },
    );
  }
  // The collect is done and the ref holds it: record that first, so a crash
  // from here on never leaves a record owing a collect from a tree that is gone.
  // The tree's removal is owed in the same commit: a crash before it is
  // done leaves a row that mu state lists and the next close finishes.
  await store.write((db) => {
    deleteJob(db, j.key);
    dropKilledView(db, j.workstream, j.agent, killed);
    if (j.site) oweRemoval(db, j, j.site, sha, io.ports.clock.now());
  });
  io.out(`collected ${sha} from ${j.host}:${site} into ${repo} (${ref})\n`);
  await crashPoint("close.collected", io.ports);
  // What in-life collects kept is in the final commit now, unless the agent rewrote it.
  dropIfContained(repo, inLifeRef(j.workstream, j.agent, j.key), sha);
}

/**
 * The stopped record names this mu as its writer while it collects, so mu
 * state says whom to wait for; a close whose own stop just committed is
 * named already. Its death leaves the collect owed, with the close to run.
 */
async function claimCollect(io: Io, store: Store, key: string): Promise<void> {
  const self = io.ports.liveness.self();
  const mine = (w: JobRecord["writer"]) => w?.pid === self.pid && w.start === self.start;
  if (mine((await store.read((db) => jobByKey(db, key)))?.writer ?? null)) return;
  await store.write((db) => {
    const cur = jobByKey(db, key);
    if (cur?.state === "stopped") putJob(db, { ...cur, writer: self });
  });
}
