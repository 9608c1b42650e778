import type { Database } from "sql.js";
import { crashPoint } from "../crash-point.js";
import { RefusedError, UnknownOutcomeError } from "../errors.js";
import { pluginStill } from "../hosts/guards.js";
import { ErrorReply, NoAnswer } from "../plugin/call-errors.js";
import { checkRequestSize } from "../plugin/request-size.js";
import type { Registration, Supervisor } from "../plugin/supervisor.js";
import type { Ports } from "../ports/types.js";
import { MAX_RETRIES, mapCallError } from "../seams/call.js";
import type { Store } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { deleteIntent, setIntentGroup, writeIntent } from "./journal.js";

// One effect, journaled: the intent is durable before the request's bytes
// are written, and deleted only with a definite answer, in the same commit
// as what that answer means. Each boundary between has a crash point.

export interface Effect {
  subject: string;
  method: string;
  key: string;
  /** What every send carries; the connection adds only the deadline. */
  params: Record<string, unknown>;
  timeoutMs: number;
  /** Written in the intent's own commit (a host row in state acquiring, say). */
  before?(db: Database): void;
  /** Written with the intent's deletion when the plugin answered. */
  done(db: Database, result: unknown): void;
  /** Written with the intent's deletion when the plugin definitely did nothing. */
  failed?(db: Database): void;
  /**
   * Why a reply fails its check against the request, or undefined when it
   * passes. A reply that fails is an unknown outcome: the intent stays.
   */
  check?(result: unknown): string | undefined;
}

export interface EffectContext {
  ports: Ports;
  store: Store;
  sup: Supervisor;
  reg: Registration;
  /** The instance the effect is recorded under; sends go nowhere else. */
  instance?: string;
  /** The intent and the process group it names, kept true if the plugin restarts. */
  intent?: { id: number; key: string; pgid: number };
}

/**
 * Sends an intent's identical params and waits for the answer, retrying what
 * the plugin calls retryable. Only to the recorded instance: a plugin that
 * restarted under another gets nothing. Anything that fails before the
 * request is written is a definite refusal (not-sent), never an unknown.
 */
export async function sendEffect(
  ctx: EffectContext,
  method: string,
  params: Record<string, unknown>,
  timeoutMs: number,
): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    let reply: Promise<unknown>;
    try {
      const { proc, hello } = await ctx.sup.ready(ctx.reg);
      if (ctx.instance !== undefined && hello.instance !== ctx.instance) {
        throw new Error(
          `the plugin now answers as instance '${hello.instance}', not '${ctx.instance}'`,
        );
      }
      if (ctx.intent && proc.pgid !== ctx.intent.pgid) {
        // A restarted plugin is another process group: the proof of "gone"
        // must look at the one that holds the request.
        const held = ctx.intent;
        await ctx.store.write((db) => setIntentGroup(db, held, proc.pgid));
        ctx.intent.pgid = proc.pgid;
      }
      reply = proc.conn.request(method, params, { timeoutMs });
    } catch (err) {
      if (err instanceof NoAnswer) throw err;
      throw new NoAnswer(method, "not-sent", `${method} not sent: ${(err as Error).message}`);
    }
    await crashPoint("effect.request-written", ctx.ports);
    try {
      const result = await reply;
      await crashPoint("effect.reply-read", ctx.ports);
      return result;
    } catch (err) {
      if (err instanceof ErrorReply && err.kind === "retryable" && attempt < MAX_RETRIES) {
        await ctx.ports.clock.sleep(100 * (attempt + 1));
        continue;
      }
      throw err;
    }
  }
}

/** True when the failure proves the plugin did nothing. */
export function definite(err: unknown): boolean {
  if (err instanceof ErrorReply) return err.kind !== "unknown-outcome";
  if (err instanceof NoAnswer) return !err.written;
  return false;
}

export function unknownOutcome(
  e: Pick<Effect, "method" | "key">,
  subject: string,
  why: string,
  next: string,
): UnknownOutcomeError {
  return new UnknownOutcomeError(
    "effect.unknown",
    "effect",
    `${e.method} for ${subject} may or may not have happened (key ${e.key}): ${why}`,
    {
      hint: `nothing was repeated; run '${next}' to resolve it`,
    },
  );
}

export async function runEffect(ctx: EffectContext, e: Effect, next: string): Promise<unknown> {
  // A request too long for the wire is refused before its intent exists:
  // an intent for a request never sent would have nothing to resolve.
  try {
    checkRequestSize(e.method, e.params);
  } catch (err) {
    throw mapCallError(ctx.reg.name, { method: e.method, effect: true }, err);
  }
  const { proc, hello } = await ctx.sup.ready(ctx.reg);
  // An effect on something recorded under one instance goes nowhere else:
  // refused before its intent is written, so nothing is pending.
  if (ctx.instance !== undefined && hello.instance !== ctx.instance) {
    throw new RefusedError(
      "effect.stop-changed",
      "effect",
      `${e.method} for ${e.subject} is for instance '${ctx.instance}', but '${ctx.reg.name}' now answers as '${hello.instance}'; nothing was sent (stop-changed)`,
      { hint: "point the plugin back at that instance" },
    );
  }
  // The plugin again in the intent's commit: an intent must never name one
  // that another mu removed since the verb read it.
  const id = await ctx.store.guarded([pluginStill(ctx.reg.name)], (db) => {
    e.before?.(db);
    return writeIntent(db, {
      subject: e.subject,
      method: e.method,
      plugin: ctx.reg.name,
      key: e.key,
      params: e.params,
      instance: hello.instance,
      pgid: proc.pgid,
      writer: ctx.ports.liveness.self(),
      writtenAt: ctx.ports.clock.now(),
    });
  });
  await crashPoint("effect.intent-durable", ctx.ports);
  let result: unknown;
  try {
    result = await sendEffect(
      { ...ctx, instance: hello.instance, intent: { id, key: e.key, pgid: proc.pgid } },
      e.method,
      e.params,
      e.timeoutMs,
    );
  } catch (err) {
    if (definite(err)) {
      await ctx.store.write((db) => {
        deleteIntent(db, { id, key: e.key });
        e.failed?.(db);
      });
      throw mapCallError(ctx.reg.name, { method: e.method, effect: true }, err, MAX_RETRIES);
    }
    throw unknownOutcome(e, e.subject, (err as Error).message, next);
  }
  const bad =
    TESTBED_BUILD && planted(ctx.ports.env, "reply-check-skipped") ? undefined : e.check?.(result);
  if (bad !== undefined)
    throw unknownOutcome(e, e.subject, `the reply fails its check: ${bad}`, next);
  await ctx.store.write((db) => {
    deleteIntent(db, { id, key: e.key });
    e.done(db, result);
  });
  await crashPoint("effect.intent-deleted", ctx.ports);
  return result;
}
