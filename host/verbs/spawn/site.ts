import { rollBackSpawn } from "../../jobs/job-rules.js";
import { keptRef, makeSite, SiteInDoubt, type SitePlan } from "../../jobs/site.js";
import { type OpenLink, openLink } from "../../seams/link.js";
import type { SpawnCtx, SpawnRequest } from "./context.js";

// Step 3 of a spawn, with --worktree: the commit reaches the host's
// repository and a git worktree is made from it. From then on the record
// owes its final collect.

/** Makes the site; nothing runs yet, so a failure that made no tree only takes the record back. */
export async function makeSpawnSite(
  ctx: SpawnCtx,
  req: SpawnRequest,
  key: string,
  plan: SitePlan | undefined,
): Promise<OpenLink | undefined> {
  const { io, store, sup, h } = ctx;
  if (!plan) return undefined;
  const link = await openLink(io, sup, req.opts.host, h);
  try {
    const kept = await makeSite(link, plan);
    if (kept)
      io.err(
        `mu: spawn: the tree ${plan.tree} on ${req.opts.host} held ${kept.sha}, which no ref named; it is kept as ${keptRef(plan, kept.sha)} in ${kept.in} there\n`,
      );
  } catch (err) {
    // A tree that may stand keeps its record: a close removes both.
    if (!(err instanceof SiteInDoubt)) await store.write((db) => rollBackSpawn(db, key));
    throw err;
  }
  return link;
}
