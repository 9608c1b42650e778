import type { Io } from "../cli/io.js";
import { spawnThat } from "../jobs/trees-left.js";
import { spawnAgainOrClose } from "./spawn/remedy.js";

// What `mu state` prints: one line per notice, each naming what is owed and
// the verb that settles it.

export interface Notice {
  kind:
    | "pending-effect"
    | "collect-owed"
    | "host-deadline"
    | "agent-gone"
    | "spawn-unfinished"
    | "spawn-unsent"
    | "delivery-unknown"
    | "delivery-undelivered"
    | "view-left"
    | "tree-left";
  subject: string;
  method: string;
  key: string;
  since: number;
  next: string;
  /** The other way on, where there is one: a close beside a spawn that takes the record on. */
  or?: string;
  /** For a tree left on its host: the tree and the host, "mu/trees/main/a on box". */
  where?: string;
  /** The pid of a live mu still at a pending effect or a collect: `next` is refused, or races it, until it ends. */
  by?: number;
  /** For a tree left on its host by a spawn, not by a close: one that never started, or one whose job was stopped when it did not come up. */
  leftBy?: "spawn" | "spawn-stopped";
}

export function printNotices(io: Io, notices: Notice[]): void {
  if (notices.length === 0) {
    io.out("nothing pending\n");
    return;
  }
  for (const n of notices) {
    if (n.kind === "agent-gone") {
      io.out(
        `notice: the job of ${n.subject} (job ${n.key}) runs, but the agent has no view; ${spawnAgainOrClose("resume", n.next, n.or ?? "")}\n`,
      );
      continue;
    }
    if (n.kind === "spawn-unsent") {
      io.out(
        `notice: the spawn of ${n.subject} (job ${n.key}) stopped before its start was sent; nothing runs: spawn it again (${n.next}) or close it\n`,
      );
      continue;
    }
    if (n.kind === "spawn-unfinished") {
      io.out(
        `notice: the spawn of ${n.subject} (job ${n.key}) stopped after its view opened, before its first prompt; ${spawnAgainOrClose("finish", n.next, n.or ?? "")}\n`,
      );
      continue;
    }
    if (n.kind === "host-deadline" && n.method === "job.stop") {
      io.out(
        `notice: the job of ${n.subject} outlives its lost host and is not stopped yet; run: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "host-deadline") {
      io.out(
        `notice: ${n.subject} runs on a host that reaches its deadline at ${new Date(n.since).toISOString()}; collect its work and close it: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "delivery-unknown") {
      io.out(
        `unknown: ${n.method} to ${n.subject.slice("agent:".length)} (${n.key}) may or may not have been applied; mu never resends it; look at the agent: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "delivery-undelivered") {
      io.out(
        `undelivered: a message to ${n.subject.slice("agent:".length)} (${n.key}) never reached the agent; send it again: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "view-left") {
      io.out(
        `left: the view of ${n.subject.slice("agent:".length)} (pane ${n.key}) was not seen closed with its job; close it: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "tree-left") {
      io.out(
        `owed: the removal of the tree ${n.where ?? ""}, left by ${n.leftBy ? "a spawn" : "the close"} of ${n.subject.slice("agent:".length)} (job ${n.key})${n.leftBy ? ` ${spawnThat(n.leftBy)},` : ""} since ${new Date(n.since).toISOString()}; ${atIt(n)}: ${n.next}\n`,
      );
      continue;
    }
    if (n.kind === "collect-owed") {
      io.out(
        `owed: the final collect of ${n.subject} (job ${n.key}), stopped since ${new Date(n.since).toISOString()}; ${atIt(n)}: ${n.next}\n`,
      );
      continue;
    }
    io.out(
      `pending: ${n.method} for ${n.subject} (key ${n.key}) since ${new Date(n.since).toISOString()}; ${atIt(n)}: ${n.next}\n`,
    );
  }
}

/** "run", or, while a live mu is at it, whom to wait for before running it. */
const atIt = (n: Notice) =>
  n.by === undefined
    ? "run"
    : `mu pid ${n.by} is at it: wait for it to end, then, if this is still listed, run`;
