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

export async function eof(ctx: RunContext, hello: InitializeResult): Promise<Outcome> {
  const evidence: string[] = [];
  let what = "";

  const a = await Session.open(ctx, "eof", []);
  what = inFlight(ctx, a, hello);
  await a.sleep(SETTLE_MS);
  let left: Escapee[] = [];
  const look = ctx.io.ports.clock.setTimer(GRACE_MS - LOOK_BEFORE_KILL_MS, () => {
    left = members(a.proc.pgid);
  });
  const t0 = a.now();
  const stopped = await a.proc.stop("normal", "contract suite: the stop sequence");
  look.cancel();
  await a.close();
  if (stopped.forced) {
    evidence.push(
      `after $/cancel, shutdown and EOF the group (${a.proc.pgid}) still ran ${GRACE_MS} ms later and mu killed it:`,
      ...show(ctx, left, a.proc.pgid),
    );
  }
  const stopMs = a.now() - t0;

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
  const eofMs = b.now() - t1;
  if (!emptied) {
    evidence.push(
      `after stdin closed (no shutdown) the group (${b.proc.pgid}) still ran ${GRACE_MS} ms later:`,
      ...show(ctx, members(b.proc.pgid), b.proc.pgid),
    );
    b.proc.killNow();
  }
  await b.close();

  if (evidence.length > 0)
    return fail("the plugin did not exit within the grace once told to stop", evidence);
  return pass(
    `${what}: the stop sequence emptied the group in ${stopMs} ms, a bare EOF in ${eofMs} ms (limit ${GRACE_MS} ms each)`,
  );
}
