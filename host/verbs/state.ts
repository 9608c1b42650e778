import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { stuckForGood, type Witness, witnessOf } from "../effects/forgettable.js";
import { intentsWhere } from "../effects/journal.js";
import { pendingVerb } from "../effects/settle-verb.js";
import { getHost } from "../hosts/records.js";
import { deadlineMarginMs } from "../jobs/admission.js";
import {
  agentOf,
  agentSubject,
  allAgents,
  allJobs,
  type JobRecord,
  jobOf,
} from "../jobs/records.js";
import { allTreesLeft } from "../jobs/trees-left.js";
import { shWord } from "../sh-quote.js";
import { segmentGlob } from "../store/archive.js";
import { type Database, openStore } from "../store/index.js";
import { retentionState } from "../store/retention.js";
import { closeCommand, spawnAgainCommand } from "./spawn/remedy.js";
import { type Notice, printNotices } from "./state-lines.js";

export type { Notice };

// What mu owes: for now, every effect whose outcome is still pending, with
// the verb that settles it. Host facts and collects join as their seams land.

/** A receipt's delivery, by the key mu gave it (only sends and interrupts carry a msgId). */
function deliveryMethod(key: string): string {
  const kind = key.split("-")[0];
  return kind === "command" || kind === "abort" || kind === "answer"
    ? `channel.${kind}`
    : "a message";
}

export async function state(io: Io, opts: { json?: boolean }): Promise<void> {
  const margin = deadlineMarginMs(io.ports.env);
  const now = io.ports.clock.now();
  const store = openStore(io.ports);
  // One read of the database for every kind of notice.
  const { notices, archived } = await store.read((db) => ({
    notices: stateNotices(db, now, margin, witnessOf(io.ports).alive),
    archived: retentionState(db).archived,
  }));
  if (opts.json) {
    printJson(io, notices);
    return;
  }
  printNotices(io, notices);
  // Retention moved these and nothing above depends on them; say where they went.
  if (archived > 0) {
    io.out(
      `archived: ${archived} settled ${archived === 1 ? "receipt" : "receipts"} of ended jobs, in ${segmentGlob(store.path)} (nothing there is owed)\n`,
    );
  }
}

/**
 * Everything mu owes, from the database alone. It reads intents, jobs, hosts,
 * agents and the receipts of live jobs: none of them is ever moved by
 * retention, so a pass never changes what this returns.
 */
export function stateNotices(
  db: Database,
  now: number,
  margin: number,
  alive: Witness["alive"] = () => true,
): Notice[] {
  const pending = intentsWhere(db, "1 = 1").map((i): Notice => {
    // A live mu still at it (its writer, or one settling it) refuses the
    // verb named here until it ends: say whom to wait for first.
    const at = alive(i.writer) ? i.writer : i.resolver && alive(i.resolver) ? i.resolver : null;
    return {
      kind: "pending-effect",
      subject: i.subject,
      method: i.method,
      key: i.key,
      since: i.writtenAt,
      next: pendingVerb(i.subject, i.method, i.params, stuckForGood(db, i, { alive, now })),
      ...(at ? { by: at.pid } : {}),
    };
  });
  const jobs = allJobs(db);
  const owed = jobs
    .filter((j) => j.state === "stopped" && j.owesCollect)
    .map(
      (j): Notice => ({
        kind: "collect-owed",
        subject: agentSubject(j.workstream, j.agent),
        method: "link.fetch",
        key: j.key,
        since: j.updatedAt,
        next: `mu agent close ${j.agent} -w ${j.workstream}`,
        // A close at the collect now: its pid, as for an effect a live mu is at.
        ...(j.writer && alive(j.writer) ? { by: j.writer.pid } : {}),
      }),
    );
  // A job whose stop is journaled is going: the close that settles it (listed
  // with the pending stop) is its one way on; a spawn that took it on, or a
  // second line about the same job, would be a second remedy.
  const stopping = (j: JobRecord) =>
    pending.some((p) => p.method === "job.stop" && p.key === j.key);
  // A running job on a lost host, or one inside its deadline margin, is
  // listed once, below, with the close that stops (and collects) it: a spawn
  // cannot resume or finish it on a machine that is gone or about to go.
  const goingAway = (j: JobRecord) => {
    const h = getHost(db, j.host);
    const d = h?.facts.deadlineAt;
    return h?.state === "lost" || (typeof d === "number" && now >= d - margin);
  };
  // Inside a provider host's deadline margin its agents must be collected and closed.
  const draining = jobs.flatMap((j): Notice[] => {
    if (stopping(j)) return [];
    const host = getHost(db, j.host);
    if (j.state === "running" && host?.state === "lost") {
      return [
        {
          kind: "host-deadline",
          subject: agentSubject(j.workstream, j.agent),
          method: "job.stop",
          key: j.key,
          since: host.updatedAt,
          next: `mu agent close ${j.agent} -w ${j.workstream}`,
        },
      ];
    }
    const d = host?.facts.deadlineAt;
    if (j.state !== "running" || typeof d !== "number" || now < d - margin) return [];
    return [
      {
        kind: "host-deadline",
        subject: agentSubject(j.workstream, j.agent),
        method: "link.fetch",
        key: j.key,
        since: d,
        next: `mu agent close ${j.agent} -w ${j.workstream}`,
      },
    ];
  });
  // A spawn cut short, and the same spawn that finishes (or takes back) it.
  const spawnAgain =
    (kind: Notice["kind"]) =>
    (j: JobRecord): Notice => ({
      kind,
      subject: agentSubject(j.workstream, j.agent),
      method: "job.start",
      key: j.key,
      since: j.updatedAt,
      next: spawnAgainCommand(
        j.workstream,
        j.agent,
        j.host,
        kind === "spawn-unsent" && j.site !== null,
      ),
      or: closeCommand(j.workstream, j.agent),
    });
  // A running job whose agent has no view (mu died between the start and the view).
  // While the spawn that started it lives it is only on its way to the view,
  // and the spawn again or the close named here would both be refused.
  const live = (j: JobRecord) => agentOf(db, j.workstream, j.agent)?.state === "live";
  const atWork = (j: JobRecord) => j.writer !== null && alive(j.writer);
  const viewless = jobs
    .filter((j) => j.state === "running" && !live(j) && !stopping(j) && !atWork(j) && !goingAway(j))
    .map(spawnAgain("agent-gone"));
  // A spawn that died after its view opened, before readiness and its first
  // prompt were done: its writer is cleared only once they are. One whose
  // first prompt was journaled has nothing left for a spawn to do: that
  // delivery is listed on its own, with the check that settles it.
  const unfinished = jobs
    .filter(
      (j) =>
        j.state === "running" &&
        j.writer !== null &&
        !alive(j.writer) &&
        live(j) &&
        !firstPromptJournaled(db, j) &&
        !stopping(j) &&
        !goingAway(j),
    )
    .map(spawnAgain("spawn-unfinished"));
  // A record a spawn wrote and died before journaling its start: nothing
  // was sent; the next spawn of the name, or a close, takes it back.
  const unsent = jobs
    .filter(
      (j) =>
        j.state === "starting" &&
        j.writer !== null &&
        !alive(j.writer) &&
        !pending.some((p) => p.method === "job.start" && p.key === j.key),
    )
    .map(spawnAgain("spawn-unsent"));
  // A delivery settled as unknown (never resent): listed while the job it
  // was for lives, since only a reading of the agent can tell what it did.
  const unknown = (
    db.exec(
      `SELECT r.msg_id, r.workstream, r.agent, r.created_at FROM receipts r
       JOIN jobs j ON j.workstream = r.workstream AND j.agent = r.agent
       WHERE r.state = 'unknown' AND r.created_at >= j.created_at ORDER BY r.created_at`,
    )[0]?.values ?? []
  ).map(
    ([msgId, ws, agent, at]): Notice => ({
      kind: "delivery-unknown",
      subject: agentSubject(String(ws), String(agent)),
      method: deliveryMethod(String(msgId)),
      key: String(msgId),
      since: Number(at),
      next: `mu agent read ${String(agent)} -w ${String(ws)}`,
    }),
  );
  // A message proved never delivered and not sent again by mu: listed with
  // the verb that sends it again while its job runs, until a later delivery
  // to the agent is accepted.
  const undelivered = (
    db.exec(
      `SELECT r.msg_id, r.workstream, r.agent, r.created_at, r.text FROM receipts r
       JOIN jobs j ON j.workstream = r.workstream AND j.agent = r.agent
       WHERE r.state = 'not-accepted' AND r.text IS NOT NULL AND r.created_at >= j.created_at
         AND NOT EXISTS (SELECT 1 FROM receipts l WHERE l.workstream = r.workstream
           AND l.agent = r.agent AND l.state = 'accepted' AND l.msg_id <> r.msg_id
           AND l.created_at >= r.created_at)
       ORDER BY r.created_at`,
    )[0]?.values ?? []
  ).map(
    ([msgId, ws, agent, at, text]): Notice => ({
      kind: "delivery-undelivered",
      subject: agentSubject(String(ws), String(agent)),
      method: "a message",
      key: String(msgId),
      since: Number(at),
      next: `mu agent send ${shWord(String(agent))} -w ${shWord(String(ws))} ${shWord(String(text))}`,
    }),
  );
  // A view the stop of its job outlived (mu died before it killed it): the
  // row names it until a verb on the name kills it. While a job owes its
  // collect, the close listed for that kills it too.
  const viewsLeft = allAgents(db)
    .filter((a) => a.state === "closed" && a.pane !== null && !jobOf(db, a.workstream, a.name))
    .map(
      (a): Notice => ({
        kind: "view-left",
        subject: agentSubject(a.workstream, a.name),
        method: "view",
        key: String(a.pane),
        since: a.createdAt,
        next: closeCommand(a.workstream, a.name),
      }),
    );
  // A collected tree whose removal a close owes (it died before the removal).
  const treesLeft = allTreesLeft(db).map((t): Notice => {
    const at = t.resolver && alive(t.resolver) ? t.resolver : null;
    return {
      kind: "tree-left",
      subject: agentSubject(t.workstream, t.agent),
      method: "tree.remove",
      key: t.jobKey,
      since: t.createdAt,
      where: `${t.site} on ${t.host}`,
      next: closeCommand(t.workstream, t.agent),
      ...(at ? { by: at.pid } : {}),
      ...(t.leftBy !== "close" ? { leftBy: t.leftBy } : {}),
    };
  });
  return [
    ...pending,
    ...viewsLeft,
    ...treesLeft,
    ...owed,
    ...draining,
    ...viewless,
    ...unfinished,
    ...unsent,
    ...unknown,
    ...undelivered,
  ];
}

/** A delivery to the job's agent that the channel may have taken: the same test a resumed spawn makes. */
function firstPromptJournaled(db: Database, j: JobRecord): boolean {
  return (
    db.exec(
      "SELECT 1 FROM receipts WHERE workstream = ? AND agent = ? AND created_at >= ? AND state <> 'not-accepted'",
      [j.workstream, j.agent, j.createdAt],
    ).length > 0
  );
}
