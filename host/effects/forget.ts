import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { RefusedError, UnknownOutcomeError } from "../errors.js";
import { anotherLive } from "../ports/another-live.js";
import type { Store } from "../store/index.js";
import { deleteIntent, type Intent, intentsFor, sameIntent } from "./journal.js";
import { UnresolvedError } from "./unresolved.js";

// What `mu agent forget` and `mu host forget` share: a person's way out of a
// start or an acquire no rule of the table can ever settle. The spec forbids
// mu to decide such an outcome itself, so it stays pending and holds its
// subject and plugin; the person who has looked at the machine or the
// provider ends mu's record of it here. The rules get their chance first:
// while any of them could still tell, forget refuses (exit 4).

export interface Forgetting<T> {
  /** The error label and what is forgotten, in words: "agent", "the start of main/a". */
  label: string;
  what: string;
  /** "a start", "an acquire": what forget ends, for the refusals' hints. */
  noun: string;
  intent: Intent;
  /** Lets the rule table try the subject's pending effects once more. */
  resolve: () => Promise<void>;
  /** The verb that settles it later, once the plugin can tell. */
  later: string;
  /** Where to look once the rules settled it after all. */
  look: string;
  /** Ends the subject's records of the attempt, in the same commit as the intent. */
  drop: (db: Database) => T;
  /** Runs once the rules gave up, just before the commit: what must be looked at while the subject is still held. */
  beforeCommit?: () => Promise<void>;
}

/** Forgets one intent no rule can settle; returns the row that left it stuck and what drop returned. */
export async function forgetStuck<T>(
  io: Io,
  store: Store,
  f: Forgetting<T>,
): Promise<{ row: string; dropped: T }> {
  const i = f.intent;
  const stuck = await whyStuck(f);
  if (!stuck || !sameIntent(stuck.intent, i)) {
    throw new RefusedError(
      "forget.settled",
      f.label,
      `${f.what} (key ${i.key}) was settled by the rule table just now`,
      { hint: `nothing to forget; see ${f.look}` },
    );
  }
  await f.beforeCommit?.();
  const out = await store.write((db) => {
    const cur = intentsFor(db, i.subject).find((x) => sameIntent(x, i));
    if (!cur) return { gone: true as const };
    // Another mu may have claimed it since the rules gave up here: it may
    // still be settling it, so the record is not ours to end.
    const r = cur.resolver;
    if (anotherLive(io.ports.liveness, r)) return { busy: r.pid };
    deleteIntent(db, i);
    return { dropped: f.drop(db) };
  });
  if ("gone" in out) {
    throw new RefusedError(
      "forget.settled",
      f.label,
      `${f.what} (key ${i.key}) was settled by another mu meanwhile`,
      { hint: `see ${f.look}` },
    );
  }
  if ("busy" in out) {
    throw new RefusedError(
      "effect.guard.resolver-alive",
      f.label,
      `${f.what} (key ${i.key}) is now in the hands of mu pid ${out.busy} (guard.resolver-alive); nothing was forgotten`,
      { hint: `wait for that mu to finish, then see ${f.look}` },
    );
  }
  io.err(`mu: journal: ${i.method} for ${i.subject} (key ${i.key}): forgotten (${stuck.row})\n`);
  return { row: stuck.row, dropped: out.dropped };
}

/**
 * Lets the rule table try once more. Returns the error of an effect that
 * stays pending for good; undefined when everything was settled. One the
 * rules may still settle refuses forget (exit 4).
 */
async function whyStuck<T>(f: Forgetting<T>): Promise<UnresolvedError | undefined> {
  try {
    await f.resolve();
    return undefined;
  } catch (err) {
    if (err instanceof UnresolvedError && err.forGood) return err;
    if (err instanceof UnknownOutcomeError) {
      throw new RefusedError(
        "forget.resolvable",
        f.label,
        `${err.message}; the rules may still settle it`,
        {
          hint: `forget ends only ${f.noun} no rule can settle; run ${f.later} later, which settles it once the plugin can tell`,
        },
      );
    }
    throw err;
  }
}
