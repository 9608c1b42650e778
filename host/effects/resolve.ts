// Size: one intent walks the rule table here, row by row in the spec's order (guards, fence, then the effect's own rows); the walk reads best whole.
import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { RefusedError, UnknownOutcomeError } from "../errors.js";
import { ErrorReply } from "../plugin/call-errors.js";
import { getPlugin } from "../plugin/registry.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { InitializeResult, KeyCaps } from "../protocol/declaration.js";
import type { Store } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import {
  type DeliveryFacts,
  decideFirst,
  decideGuard,
  decideLookup,
  decideReceipt,
  type First,
  type GuardRow,
  type LookupAnswer,
  noneForGood,
  type ReceiptAnswer,
  STUCK_FOR_GOOD,
} from "./decide.js";
import { startOnReleasedMachine } from "./forgettable.js";
import { deleteIntent, type Intent, intentsFor, markResolver, sameIntent } from "./journal.js";
import { definite, sendEffect } from "./run-effect.js";
import { pendingVerb } from "./settle-verb.js";
import { EFFECT_MS, READ_MS, WRITER_SPAN_MS } from "./timeouts.js";
import { unresolved } from "./unresolved.js";

// The next verb on a subject (a host, an agent) resolves whatever effect on
// it is still pending, before it does anything else, by the rows of the rule
// table. What a row means for the subject's records is the subject's own
// business: the SubjectRules.

export { EFFECT_MS, READ_MS };

export interface SubjectRules {
  /** The key capabilities the intent's effect is resolved by, if any. */
  caps(hello: InitializeResult, i: Intent): KeyCaps | undefined;
  lookupMethod: string;
  /** A file-handle job kind never acts on none. */
  fileHandle(hello: InitializeResult): boolean;
  /** The rule-table id to report for a decision (an at-start start has rows of its own). */
  rowName(i: Intent, row: string): string;
  /** What a definite answer (a resend's reply, a lookup's found) means for the records. */
  record(db: Database, i: Intent, result: unknown, now: number): void;
  /** What a proven none means: the attempt is rolled back. */
  rollback(db: Database, i: Intent, now: number): void;
  /** For a subject that takes deliveries: what its channel offers, and whether a newer one was written. */
  delivery?(db: Database, hello: InitializeResult, i: Intent): DeliveryFacts | undefined;
  /** False for an intent whose staying unresolved must not stop the verb (a delivery). */
  blocks?(i: Intent): boolean;
  /** What an intent that can never be resolved leaves in the records (a superseded delivery). */
  abandon?(db: Database, i: Intent, now: number): void;
  /** Why a lookup's found fails the reply check, or undefined when it passes. */
  checkFound?(hello: InitializeResult, i: Intent, found: unknown): string | undefined;
  /** What a delivery definitely never taken leaves in the records. */
  undelivered?(db: Database, i: Intent, now: number): void;
  /** The line telling the user how to send an undelivered message again. */
  sendAgain?(i: Intent): string | undefined;
  /** Why a resend's reply fails its check against the request, or undefined. */
  checkResult?(hello: InitializeResult, i: Intent, result: unknown): string | undefined;
}

/** The verb with which a person ends a start or an acquire no rule can ever resolve. */
function forgetVerb(i: Intent): string | undefined {
  if (i.method !== "job.start" && i.method !== "host.acquire") return undefined;
  return pendingVerb(i.subject, i.method, i.params, true);
}

function say(io: Io, i: Intent, row: string): void {
  io.err(`mu: journal: ${i.method} for ${i.subject} (key ${i.key}): ${row}\n`);
}

/**
 * The testbed's planted bug, inert unless MU_TESTBED_PLANT names it: the
 * explorer must find it. `resend-without-lookup` resends a keyed effect
 * instead of looking it up, which can make a second machine or job;
 * `resend-no-msgid` resends a delivery nothing can dedupe (host/testbed-plant.ts).
 */
function plantedBug(env: Readonly<Record<string, string | undefined>>, first: First): First {
  if (TESTBED_BUILD && planted(env, "resend-without-lookup") && first.row === "keyed")
    return { row: "acquire.dedupe.inside", ask: "resend" };
  if (TESTBED_BUILD && planted(env, "resend-no-msgid") && first.row === "delivery.no-msgid")
    return { row: "delivery.resend", ask: "resend" };
  return first;
}

/** Resolves every pending intent on the subject; throws when one stays pending. */
export async function resolvePending(
  io: Io,
  store: Store,
  sup: Supervisor,
  subject: string,
  next: string,
  rules: SubjectRules,
): Promise<void> {
  const pending = await store.read((db) => intentsFor(db, subject));
  // A delivery left unknown is looked at again once a later intent of the
  // same pass settles: a stop reissued after it ends the job it was for, and
  // a delivery to an ended job is settled (delivery.job-ended), not left
  // behind with no agent to name it by.
  const left: { i: Intent; err?: RefusedError | UnknownOutcomeError }[] = [];
  let settledLater = false;
  try {
    for (const i of pending) {
      const err = await tryResolve(io, store, sup, i, next, rules);
      if (err) left.push({ i, err });
      else if (left.length > 0) settledLater = true;
    }
    // Each looked at once more. Those a throw cuts off are still reported as
    // they stood; the one that threw reports itself.
    if (settledLater)
      for (const l of left) {
        l.err = undefined;
        l.err = await tryResolve(io, store, sup, l.i, next, rules);
      }
  } finally {
    for (const { err } of left) if (err) io.err(`${err.line()}\n`);
  }
}

/**
 * One intent resolved; a delivery that stays unknown is returned rather
 * than thrown. It must not make the agent unreachable: the verb says so and
 * goes on, and every later delivery then counts as newer, so it is never
 * resent out of order. One still in another mu's hands is not unknown yet:
 * that mu settles it soon, so the verb refuses (exit 4) until it is done.
 */
async function tryResolve(
  io: Io,
  store: Store,
  sup: Supervisor,
  i: Intent,
  next: string,
  rules: SubjectRules,
): Promise<RefusedError | UnknownOutcomeError | undefined> {
  try {
    await resolveOne(io, store, sup, i, next, rules);
    return undefined;
  } catch (err) {
    if (
      rules.blocks?.(i) === false &&
      (err instanceof UnknownOutcomeError ||
        (err instanceof RefusedError && !err.code.startsWith("effect.guard.")))
    )
      return err;
    throw err;
  }
}

export function guardRefusal(
  i: Intent,
  row: GuardRow,
  who: { pid: number },
  now: number,
): RefusedError {
  const by = i.writtenAt + WRITER_SPAN_MS;
  const hint =
    row === "guard.resolver-alive"
      ? "wait for that mu to finish, then run the verb again"
      : now < by
        ? `it gives up by ${new Date(by).toISOString()} at the latest (its deadlines and grace); run the verb again after it ends`
        : `it is past its deadlines and grace; if it hangs, end it (kill ${who.pid}), then run the verb again`;
  return new RefusedError(
    `effect.${row}`,
    "effect",
    `${i.method} for ${i.subject} is still in the hands of mu pid ${who.pid} (${row})`,
    { hint },
  );
}

async function resolveOne(
  io: Io,
  store: Store,
  sup: Supervisor,
  i: Intent,
  next: string,
  rules: SubjectRules,
): Promise<void> {
  const { liveness, clock } = io.ports;
  const me = liveness.self();
  // The writer guard needs no plugin: refuse before starting one.
  const writerGuard = decideGuard({ writerAlive: liveness.alive(i.writer), resolverAlive: false });
  if (writerGuard) throw guardRefusal(i, writerGuard, i.writer, clock.now());
  const reg = await store.read((db) => getPlugin(db, i.plugin));
  if (!reg) {
    throw new RefusedError(
      "effect.plugin-gone",
      "effect",
      `${i.method} for ${i.subject} names plugin '${i.plugin}', which is no longer registered`,
      { hint: `register it again with the same argv: mu plugin add ${i.plugin} -- …` },
    );
  }
  const registration = { name: reg.name, argv: reg.argv, declaration: reg.declaration };
  const { hello } = await sup.ready(registration);
  // Claim the intent in one commit: re-read it, refuse if another live
  // resolver holds it, stop if it was resolved meanwhile.
  const claim = await store.write((db) => {
    const cur = intentsFor(db, i.subject).find((x) => sameIntent(x, i));
    if (!cur) return "gone" as const;
    const other = cur.resolver && cur.resolver.pid !== me.pid ? cur.resolver : null;
    if (other) {
      const row = decideGuard({ writerAlive: false, resolverAlive: liveness.alive(other) });
      if (row) return { row, who: other };
    }
    markResolver(db, i, me);
    return "mine" as const;
  });
  if (claim === "gone") return;
  if (claim !== "mine") throw guardRefusal(i, claim.row, claim.who, clock.now());
  const caps = rules.caps(hello, i);
  // Read the clock only now: starting the plugin can take a while, and a
  // window judged before it could close before the resend goes out.
  const facts = {
    writerAlive: false,
    resolverAlive: false,
    groupEmpty: liveness.groupEmpty(i.pgid),
    now: clock.now(),
  };
  const delivery = rules.delivery
    ? await store.read((db) => rules.delivery?.(db, hello, i))
    : undefined;
  const first = plantedBug(
    io.ports.env,
    decideFirst(i, caps, { ...facts, instance: hello.instance }, delivery),
  );
  if (first.row === "fence.instance") {
    throw new RefusedError(
      "effect.stop-changed",
      "effect",
      `${i.method} for ${i.subject} was recorded under instance '${i.instance}', but '${reg.name}' now answers as '${hello.instance}'; nothing was sent (stop-changed)`,
      {
        hint: "point the plugin back at that instance to resolve it",
      },
    );
  }
  const ctx = {
    ports: io.ports,
    store,
    sup,
    reg: registration,
    instance: i.instance,
    intent: { id: i.id, key: i.key, pgid: i.pgid },
  };
  if (first.ask === "resend") {
    let result: unknown;
    try {
      result = await sendEffect(ctx, i.method, i.params, EFFECT_MS);
    } catch (err) {
      // A failed resend says nothing about the first send: keep the intent.
      // One refused for good on a machine mu released is stuck for good.
      const gone =
        err instanceof ErrorReply &&
        err.kind === "permanent" &&
        (await store.read((db) => startOnReleasedMachine(db, i)));
      throw unresolved(
        i,
        first.row,
        (err as Error).message,
        next,
        gone ? forgetVerb(i) : undefined,
      );
    }
    const bad = rules.checkResult?.(hello, i, result);
    if (bad !== undefined)
      throw unresolved(i, first.row, `the reply fails its check: ${bad}`, next);
    await settle(store, i, (db) => rules.record(db, i, result, clock.now()));
    say(io, i, rules.rowName(i, first.row));
    return;
  }
  if (
    (first.row === "delivery.superseded" ||
      first.row === "delivery.no-msgid" ||
      first.row === "delivery.job-ended") &&
    rules.abandon
  ) {
    // Never resent, and nothing will ever make a resend safe again: the
    // receipt says unknown from now on, and the intent has done its work.
    await settle(store, i, (db) => rules.abandon?.(db, i, clock.now()));
    say(io, i, first.row);
    return;
  }
  if (first.ask === "nothing") {
    // A superseded delivery never comes here: only the agent's rules know of
    // deliveries, and they abandon it above.
    const why = first.row.endsWith(".dedupe.expired")
      ? "its dedupe window has passed, so a resend could make a second one"
      : "the plugin offers no way to learn the outcome";
    const forGood = STUCK_FOR_GOOD.includes(first.row) ? forgetVerb(i) : undefined;
    throw unresolved(i, rules.rowName(i, first.row), why, next, forGood);
  }
  if (first.ask === "receipt") {
    const msgId = String(i.params.msgId);
    let answer: ReceiptAnswer;
    try {
      answer = (await sendEffect(
        { ...ctx, intent: undefined },
        "channel.receipt",
        { target: i.params.target, msgId },
        READ_MS,
      )) as ReceiptAnswer;
    } catch (err) {
      throw unresolved(
        i,
        "delivery.receipt.other",
        `the receipt got no answer: ${(err as Error).message}`,
        next,
      );
    }
    const row = decideReceipt(answer, msgId, delivery, facts.groupEmpty);
    if (row === "delivery.receipt.other") {
      const why =
        answer.id !== msgId
          ? `the receipt names msgId ${answer.id}, not ${msgId}`
          : answer.state === "not-accepted"
            ? "the channel says not-accepted, but the plugin process that got the request may still hold it"
            : `the channel says ${answer.state}`;
      throw unresolved(i, row, why, next);
    }
    if (row === "delivery.receipt.not-accepted.resend") {
      await resendDelivery(io, store, ctx, hello, i, row, next, rules);
      return;
    }
    if (row === "delivery.receipt.not-accepted.settled") {
      await settleUndelivered(io, store, i, row, rules);
      return;
    }
    await settle(store, i, (db) => rules.record(db, i, answer, clock.now()));
    say(io, i, row);
    return;
  }
  let answer: LookupAnswer;
  try {
    // A lookup is a read: the intent keeps naming the group that got the request.
    answer = (await sendEffect(
      { ...ctx, intent: undefined },
      rules.lookupMethod,
      { target: i.params.target, key: i.key, fence: first.fence },
      READ_MS,
    )) as LookupAnswer;
  } catch (err) {
    throw unresolved(
      i,
      rules.rowName(i, `${i.method === "job.start" ? "start" : "acquire"}.lookup.unknown`),
      `the lookup got no answer: ${(err as Error).message}`,
      next,
    );
  }
  // A found that fails the reply check is no answer at all.
  const bad = "found" in answer ? rules.checkFound?.(hello, i, answer.found) : undefined;
  if (bad) throw unresolved(i, rules.rowName(i, "start.lookup.unknown"), bad, next);
  const lookupFacts = {
    ...facts,
    now: clock.now(),
    instance: hello.instance,
    fenced: first.fence,
    inFlightMs: caps?.inFlightMs,
    fileHandle: rules.fileHandle(hello),
  };
  const row = decideLookup(i.method, answer, i, lookupFacts);
  const named = rules.rowName(i, row);
  if (row.endsWith(".found")) {
    await settle(store, i, (db) =>
      rules.record(db, i, (answer as { found: unknown }).found, clock.now()),
    );
  } else if (row.endsWith(".none.proven")) {
    await settle(store, i, (db) => rules.rollback(db, i, clock.now()));
  } else {
    const why =
      "unknown" in answer
        ? `the plugin says: ${answer.unknown}`
        : row === "start.lookup.none.file"
          ? "the plugin knows of no such job, but a file-handle job may still write its handle"
          : "none" in answer
            ? "the plugin knows of no such effect, but mu cannot yet prove none was made"
            : "the plugin cannot tell yet";
    const forGood = noneForGood(answer, i, lookupFacts) ? forgetVerb(i) : undefined;
    throw unresolved(i, named, why, next, forGood);
  }
  say(io, i, named);
}

/**
 * A delivery the channel's exact receipt says it never took, sent again with
 * its identical params: the same msgId, so exact dedupe applies it once. A
 * resend the plugin refused outright did nothing either: the delivery is
 * then settled as not delivered, once no process can still carry the first.
 */
async function resendDelivery(
  io: Io,
  store: Store,
  ctx: Parameters<typeof sendEffect>[0],
  hello: InitializeResult,
  i: Intent,
  row: string,
  next: string,
  rules: SubjectRules,
): Promise<void> {
  let result: unknown;
  try {
    result = await sendEffect(ctx, i.method, i.params, EFFECT_MS);
  } catch (err) {
    if (definite(err) && ctx.intent && io.ports.liveness.groupEmpty(ctx.intent.pgid))
      return settleUndelivered(io, store, i, "delivery.receipt.not-accepted.settled", rules);
    throw unresolved(i, row, (err as Error).message, next);
  }
  const bad = rules.checkResult?.(hello, i, result);
  if (bad !== undefined) throw unresolved(i, row, `the reply fails its check: ${bad}`, next);
  await settle(store, i, (db) => rules.record(db, i, result, io.ports.clock.now()));
  say(io, i, row);
}

/** A delivery that definitely never arrived: settled so, and the user told how to send it again. */
async function settleUndelivered(
  io: Io,
  store: Store,
  i: Intent,
  row: string,
  rules: SubjectRules,
): Promise<void> {
  await settle(store, i, (db) => rules.undelivered?.(db, i, io.ports.clock.now()));
  say(io, i, row);
  const again = rules.sendAgain?.(i);
  if (again) io.err(`mu: ${again}\n`);
}

/** Deletes the intent and records its outcome, only if the intent is still there. */
async function settle(store: Store, i: Intent, apply: (db: Database) => void): Promise<void> {
  await store.write((db) => {
    if (!intentsFor(db, i.subject).some((x) => sameIntent(x, i))) return;
    deleteIntent(db, i);
    apply(db);
  });
}
