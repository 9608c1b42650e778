import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { RefusedError, UnknownOutcomeError } from "../errors.js";
import { deleteHost, getHost, putHost } from "../hosts/records.js";
import { getPlugin } from "../plugin/registry.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { Store } from "../store/index.js";
import { decideFirst, decideLookup, type LookupAnswer } from "./decide.js";
import { deleteIntent, type Intent, intentsFor, markResolver } from "./journal.js";
import { definite, sendEffect } from "./run-effect.js";

// The next verb on a host resolves whatever effect on it is still pending,
// before it does anything else, by the rows of the rule table.

export const READ_MS = 10_000;
export const EFFECT_MS = 60_000;

export interface HostAcquired {
  handle: string;
  deadlineAt?: number;
  idleReclaimMs?: number;
  maxJobs?: number;
}

/** What mu records as facts: everything of the acquire result but the handle. */
export function acquiredFacts(r: HostAcquired): Record<string, unknown> {
  const { handle: _h, ...facts } = r;
  return facts;
}

function say(io: Io, i: Intent, row: string): void {
  io.err(`mu: journal: ${i.method} for ${i.subject} (key ${i.key}): ${row}\n`);
}

function unresolved(i: Intent, row: string, why: string, next: string): UnknownOutcomeError {
  return new UnknownOutcomeError(
    `effect.${row}`,
    "effect",
    `${i.method} for ${i.subject} is still unresolved (key ${i.key}; ${row}): ${why}`,
    {
      hint: `nothing was repeated; run '${next}' again later`,
    },
  );
}

/** Resolves every pending intent on the host; throws when one stays pending. */
export async function resolveHost(
  io: Io,
  store: Store,
  sup: Supervisor,
  name: string,
  next: string,
): Promise<void> {
  const pending = await store.read((db) => intentsFor(db, `host:${name}`));
  for (const i of pending) await resolveOne(io, store, sup, i, name, next);
}

async function resolveOne(
  io: Io,
  store: Store,
  sup: Supervisor,
  i: Intent,
  name: string,
  next: string,
): Promise<void> {
  const { liveness, clock } = io.ports;
  const me = liveness.self();
  const writerAlive = liveness.alive(i.writer);
  const resolverAlive =
    i.resolver !== null && i.resolver.pid !== me.pid && liveness.alive(i.resolver);
  const reg = await store.read((db) => getPlugin(db, i.plugin));
  if (!reg)
    throw new RefusedError(
      "effect.plugin-gone",
      "effect",
      `${i.method} for ${i.subject} names plugin '${i.plugin}', which is no longer registered`,
    );
  const facts = {
    writerAlive,
    resolverAlive,
    groupEmpty: liveness.groupEmpty(i.pgid),
    now: clock.now(),
  };
  // The guards need no plugin: refuse before starting one.
  if (writerAlive || resolverAlive) {
    const row = writerAlive ? "guard.writer-alive" : "guard.resolver-alive";
    const who = writerAlive ? i.writer : i.resolver;
    throw new RefusedError(
      `effect.${row}`,
      "effect",
      `${i.method} for ${i.subject} is still in the hands of mu pid ${who?.pid} (${row})`,
      {
        hint: "wait for that mu to finish, then run the verb again",
      },
    );
  }
  const { hello } = await sup.ready({
    name: reg.name,
    argv: reg.argv,
    declaration: reg.declaration,
  });
  const caps = hello.seams.host?.acquire;
  const first = decideFirst(i, caps, { ...facts, instance: hello.instance });
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
  await store.write((db) => markResolver(db, i.id, me));
  const ctx = {
    ports: io.ports,
    store,
    sup,
    reg: { name: reg.name, argv: reg.argv, declaration: reg.declaration },
  };
  if (first.ask === "resend") {
    let result: unknown;
    try {
      result = await sendEffect(ctx, i.method, i.params, EFFECT_MS);
    } catch (err) {
      if (definite(err) && i.method === "host.acquire") {
        await store.write((db) => {
          deleteIntent(db, i.id);
          deleteHost(db, name);
        });
        say(io, i, `${first.row}: the resend definitely failed; rolled back`);
        return;
      }
      throw unresolved(i, first.row, (err as Error).message, next);
    }
    await store.write((db) => {
      deleteIntent(db, i.id);
      record(db, i, name, result, clock.now());
    });
    say(io, i, first.row);
    return;
  }
  if (first.ask === "nothing")
    throw unresolved(i, first.row, "the plugin offers no way to learn the outcome", next);
  const answer = (await sendEffect(
    ctx,
    "host.lookup",
    { target: i.params.target, key: i.key, fence: first.fence },
    READ_MS,
  )) as LookupAnswer;
  const row = decideLookup(i.method, answer, i, {
    ...facts,
    now: clock.now(),
    instance: hello.instance,
    fenced: first.fence,
    inFlightMs: caps?.inFlightMs,
    fileHandle: false,
  });
  if (row.endsWith(".found")) {
    await store.write((db) => {
      deleteIntent(db, i.id);
      record(db, i, name, (answer as { found: unknown }).found, clock.now());
    });
  } else if (row.endsWith(".none.proven")) {
    await store.write((db) => {
      deleteIntent(db, i.id);
      if (i.method === "host.acquire") deleteHost(db, name);
    });
  } else {
    const why =
      "unknown" in answer ? `the plugin says: ${answer.unknown}` : "the plugin cannot tell yet";
    throw unresolved(i, row, why, next);
  }
  say(io, i, row);
}

/** What a definite answer to a host effect means for the host record. */
function record(db: Database, i: Intent, name: string, result: unknown, now: number): void {
  const h = getHost(db, name);
  if (!h) return;
  if (i.method === "host.acquire") {
    const r = result as HostAcquired;
    putHost(db, {
      ...h,
      handle: r.handle,
      state: "ready",
      facts: acquiredFacts(r),
      updatedAt: now,
    });
  } else if (i.method === "host.release") {
    putHost(db, { ...h, state: "released", updatedAt: now });
  }
}
