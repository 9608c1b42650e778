import type { Io } from "../cli/io.js";
import { inLifeRef } from "../git/fetch-place.js";
import type { Supervisor } from "../plugin/supervisor.js";
import { DEFAULT_LINK_TIMEOUT_MS, fetchInto, openLink } from "../seams/link.js";
import type { Store } from "../store/index.js";
import type { FoundAgent } from "./agent-host.js";
import { jobOf, putJob } from "./records.js";

// A provider host with a deadline or an idle reclaim may take an agent's
// tree away before anyone closes it, so mu wait fetches the tree's work
// back after it reports a settle or a deadline: one in-life collect. A
// failure backs off (30 s, doubling, at most 10 min); inside the deadline
// margin a success is rate-limited the same way. It never clears the final
// collect that close still owes.

export const COLLECT_BACKOFF_MS = 30_000;
const MAX_BACKOFF_MS = 10 * 60_000;

export async function inLifeCollect(
  io: Io,
  store: Store,
  sup: Supervisor,
  a: FoundAgent,
  marginMs: number,
): Promise<void> {
  const facts = a.host.provider?.facts;
  if (!facts || (facts.deadlineAt === undefined && facts.idleReclaimMs === undefined)) return;
  const j = a.job;
  if (!j.site || !j.localRepo || j.state !== "running") return;
  const now = io.ports.clock.now();
  const label = `${j.workstream}/${j.agent}`;
  if (j.nextCollectAt !== null && now < j.nextCollectAt) return;
  let failures = 0;
  let next: number | null = null;
  try {
    const ref = inLifeRef(j.workstream, j.agent, j.key);
    const sha = await fetchInto(
      await openLink(io, sup, j.host, a.host),
      j.site,
      j.localRepo,
      ref,
      DEFAULT_LINK_TIMEOUT_MS,
    );
    io.out(`collected ${sha} from ${j.host}:${j.site} into ${j.localRepo} (in-life, ${ref})\n`);
    const deadlineAt = facts.deadlineAt;
    if (typeof deadlineAt === "number" && now >= deadlineAt - marginMs)
      next = now + COLLECT_BACKOFF_MS;
  } catch (err) {
    failures = j.collectFailures + 1;
    next = now + Math.min(MAX_BACKOFF_MS, COLLECT_BACKOFF_MS * 2 ** (failures - 1));
    io.err(
      `mu: collect: the in-life collect of ${label} failed (${(err as Error).message.split("\n")[0]}); the next one waits until ${new Date(next).toISOString()}\n`,
    );
  }
  await store.write((db) => {
    const cur = jobOf(db, j.workstream, j.agent);
    if (cur) putJob(db, { ...cur, collectFailures: failures, nextCollectAt: next });
  });
}
