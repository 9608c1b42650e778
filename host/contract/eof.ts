import { GRACE_MS } from "../plugin/plugin-process.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { type Escapee, members } from "./escapees.js";
import { type RunContext, Session } from "./session.js";
import { profileTarget } from "./target.js";
import { fail, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// How a plugin ends. Two starts: one stopped by mu's stop sequence with a
// call in flight ($/cancel, shutdown, EOF), one that only sees stdin close,
// as when mu is SIGKILLed. Either way its group must be empty within the
// grace, by the plugin's own doing rather than mu's kill at its end.

/**
 * Outlasts the grace: a plugin that reads its next line only once the call
 * in hand is answered sees $/cancel, shutdown and EOF too late.
 */
const INFLIGHT_SCRIPT = "sleep 8";
const SETTLE_MS = 200;
/** When to look at who is still in the group, just before mu's kill would hide them. */
const LOOK_BEFORE_KILL_MS = 300;

/** What was still in the group, less the suite's own launcher (its leader when there is one). */
const show = (ctx: RunContext, all: Escapee[], leader: number) => {
  const ps = ctx.launcher ? all.filter((p) => p.pid !== leader) : all;
  return ps.length === 0
    ? ["(the group emptied at the last moment)"]
    : ps.map((p) => `pid ${p.pid}: ${clip(p.cmdline)}`);
};

function inFlight(ctx: RunContext, s: Session, hello: InitializeResult): string {
  if (!hello.seams.link) return "no call in flight (no link seam)";
  // Its answer, or its lack, is not what this check is about.
  s.call(
    "link.exec",
    {
      target: ctx.linkTarget ?? profileTarget(hello),
      script: INFLIGHT_SCRIPT,
      cwd: ".",
      timeoutMs: 20_000,
    },
    20_000 + GRACE_MS,
  ).catch(() => {});
  return `link.exec '${INFLIGHT_SCRIPT}' in flight`;
}

/** Start a, stopped by mu's stop sequence: its evidence, and how long the group took to empty. */
async function stopSequence(
  ctx: RunContext,
  hello: InitializeResult,
): Promise<{ what: string; evidence: string[]; ms: number }> {
  const a = await Session.open(ctx, "eof", []);
  const what = inFlight(ctx, a, hello);
  await a.sleep(SETTLE_MS);
  let left: Escapee[] = [];
  const look = ctx.io.ports.clock.setTimer(GRACE_MS - LOOK_BEFORE_KILL_MS, () => {
    left = members(a.proc.pgid);
  });
  const t0 = a.now();
  const stopped = await a.proc.stop("normal", "contract suite: the stop sequence");
  look.cancel();
  await a.close();
  const evidence = stopped.forced
    ? [
        `after $/cancel, shutdown and EOF the group (${a.proc.pgid}) still ran ${GRACE_MS} ms later and mu killed it:`,
        ...show(ctx, left, a.proc.pgid),
      ]
    : [];
  return { what, evidence, ms: a.now() - t0 };
}

/** Start b, which only sees its stdin close, as when mu is SIGKILLed. */
async function bareEof(
  ctx: RunContext,
  hello: InitializeResult,
): Promise<{ evidence: string[]; ms: number }> {
  const b = await Session.open(ctx, "eof", []);
  inFlight(ctx, b, hello);
  await b.sleep(SETTLE_MS);
  const t1 = b.now();
  b.proc.child.closeInput();
  let emptied = false;
  while (b.now() - t1 < GRACE_MS) {
    if (ctx.io.ports.liveness.groupEmpty(b.proc.pgid)) {
      emptied = true;
      break;
    }
    await b.sleep(20);
  }
  const ms = b.now() - t1;
  const evidence: string[] = [];
  if (!emptied) {
    evidence.push(
      `after stdin closed (no shutdown) the group (${b.proc.pgid}) still ran ${GRACE_MS} ms later:`,
      ...show(ctx, members(b.proc.pgid), b.proc.pgid),
    );
    b.proc.killNow();
  }
  await b.close();
  return { evidence, ms };
}

export async function eof(ctx: RunContext, hello: InitializeResult): Promise<Outcome> {
  // The two starts share nothing, so they run at once: a plugin that
  // outlives both waits one grace, not two.
  // Both ended before the verdict, even where one could not start.
  const [sa, sb] = await Promise.allSettled([stopSequence(ctx, hello), bareEof(ctx, hello)]);
  if (sa.status === "rejected") throw sa.reason;
  if (sb.status === "rejected") throw sb.reason;
  const [a, b] = [sa.value, sb.value];
  const evidence = [...a.evidence, ...b.evidence];
  if (evidence.length > 0) {
    ctx.outlivesStop = true;
    return fail(
      "the plugin did not exit within the grace once told to stop (the later checks kill each of their starts as soon as they stop it, not waiting the grace out)",
      evidence,
    );
  }
  return pass(
    `${a.what}: the stop sequence emptied the group in ${a.ms} ms, a bare EOF in ${b.ms} ms (limit ${GRACE_MS} ms each)`,
  );
}
