import { randomBytes } from "node:crypto";
import type { HostAcquired } from "../effects/resolve-host.js";
import { canonical } from "../plugin/load-rules.js";
import type { KeyCaps } from "../protocol/declaration.js";
import type { RunContext, Session } from "./session.js";
import { CHECK_HOST, type Target } from "./target.js";
import { CheckFailed, describeCall, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The host seam's promises, checked against real machines: these checks run
// only when the author names --seam host, with the author's --param values,
// and every machine acquired is released before the check ends.

const EFFECT_MS = 60_000;
/** A provider may take a while to boot or tear down a machine; status is asked again until then. */
const SETTLE_MS = 30_000;
const POLL_MS = 250;

export interface Machine {
  key: string;
  acquired: HostAcquired;
  target: Target;
  released: boolean;
}

export function newKey(ctx: RunContext): string {
  return `mu-check-${ctx.runId}-${randomBytes(4).toString("hex")}`;
}

export async function acquire(
  s: Session,
  params: Record<string, string>,
  key: string,
): Promise<Machine> {
  const acquired = (await must(
    "host.acquire",
    s.call("host.acquire", { target: { host: { name: CHECK_HOST } }, key, params }, EFFECT_MS),
  )) as HostAcquired;
  return {
    key,
    acquired,
    target: { host: { name: CHECK_HOST, handle: acquired.handle, instance: s.hello.instance } },
    released: false,
  };
}

export async function release(s: Session, m: Machine, what = "host.release"): Promise<void> {
  const r = await must(what, s.call("host.release", { target: m.target, key: m.key }, EFFECT_MS));
  m.released = true;
  if (r !== null)
    throw new CheckFailed(`${what} answered ${clip(canonical(r))}, not null`, [canonical(r)]);
}

/**
 * Gives back a machine a failed check still holds, from a fresh start if
 * this one can no longer talk. If even that fails the author must know
 * which machine to release by hand.
 */
export async function cleanUp(s: Session, m: Machine | undefined, evidence: string[]) {
  if (!m || m.released) return;
  const why = (err: unknown) =>
    err instanceof CheckFailed ? err.evidence.join("; ") : describeCall(err);
  try {
    await release(s, m, "cleanup release");
    return;
  } catch (err) {
    if (s.proc.conn.state === "open") {
      evidence.push(`could not release ${m.acquired.handle} (key ${m.key}): ${why(err)}`);
      return;
    }
  }
  try {
    const fresh = await s.again();
    try {
      await release(fresh, m, "cleanup release");
    } finally {
      await fresh.close();
    }
  } catch (err) {
    evidence.push(
      `could not release ${m.acquired.handle} (key ${m.key}): ${why(err)}; release it by hand`,
    );
  }
}

/** Runs fn with a freshly acquired machine, released afterwards whatever happens. */
export async function withMachine<T>(
  s: Session,
  params: Record<string, string>,
  key: string,
  fn: (m: Machine) => Promise<T>,
): Promise<T> {
  const m = await acquire(s, params, key);
  let failure: unknown;
  let result: T | undefined;
  try {
    result = await fn(m);
  } catch (err) {
    failure = err;
  }
  const evidence: string[] = [];
  await cleanUp(s, m, evidence);
  if (failure instanceof CheckFailed)
    throw new CheckFailed(failure.detail, [...failure.evidence, ...evidence]);
  if (failure !== undefined) throw failure;
  if (evidence.length > 0)
    throw new CheckFailed(
      `the machine the check acquired could not be released: ${evidence[0]}`,
      evidence,
    );
  return result as T;
}

type Status = { state: string; handle?: string; reason?: string; remedy?: string };

export async function statusUntil(s: Session, m: Machine, want: "up" | "gone"): Promise<Status> {
  const until = s.now() + SETTLE_MS;
  for (;;) {
    const st = (await must("host.status", s.call("host.status", { target: m.target }))) as Status;
    if (st.state === want) return st;
    // up and unknown can be on the way to either; gone before up, or a
    // hand-back, is an answer.
    const transient = st.state === "unknown" || (want === "gone" && st.state === "up");
    if (!transient || s.now() >= until) {
      throw new CheckFailed(
        `host.status answered ${st.state}${transient ? ` for ${SETTLE_MS / 1000} s` : ""} where ${want} was due`,
        [canonical(st)],
      );
    }
    await s.sleep(POLL_MS);
  }
}

export async function lifecycle(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
): Promise<Outcome> {
  let handle = "";
  await withMachine(s, params, newKey(ctx), async (m) => {
    handle = m.acquired.handle;
    const up = await statusUntil(s, m, "up");
    if (up.handle !== m.acquired.handle)
      throw new CheckFailed(
        `host.status up names handle ${up.handle}, not the ${m.acquired.handle} host.acquire gave`,
        [`acquire: ${canonical(m.acquired)}`, `status: ${canonical(up)}`],
      );
    await release(s, m);
    await statusUntil(s, m, "gone");
  });
  return pass(`acquired ${handle}, status up, released, status gone`);
}

export async function idempotency(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
  caps: KeyCaps,
  repeat: number,
): Promise<Outcome> {
  const window = caps.dedupe?.exact ? caps.dedupe.windowMs : undefined;
  for (let round = 1; round <= repeat; round++) {
    try {
      await withMachine(s, params, newKey(ctx), async (m) => {
        if (window !== undefined) {
          const again = await must(
            "a repeated host.acquire",
            s.call(
              "host.acquire",
              { target: { host: { name: CHECK_HOST } }, key: m.key, params },
              EFFECT_MS,
            ),
          );
          if (canonical(again) !== canonical(m.acquired)) {
            // A second machine may exist now, under the same key; release covers it.
            throw new CheckFailed(
              `a repeat of host.acquire inside the ${window} ms dedupe window did not return the first result`,
              [`first: ${canonical(m.acquired)}`, `repeat: ${canonical(again)}`],
            );
          }
        }
        if (caps.lookup) {
          const found = (await must(
            "host.lookup",
            s.call("host.lookup", {
              target: { host: { name: CHECK_HOST } },
              key: m.key,
              fence: false,
            }),
          )) as { found?: HostAcquired };
          if (found.found?.handle !== m.acquired.handle)
            throw new CheckFailed(
              `host.lookup of an acquired key answered ${clip(canonical(found))}, not found with handle ${m.acquired.handle}`,
              [`acquire: ${canonical(m.acquired)}`, `lookup: ${canonical(found)}`],
            );
        }
        await release(s, m);
        await release(s, m, "a second host.release of the released host");
      });
      if (caps.lookup) {
        const none = await must(
          "host.lookup",
          s.call("host.lookup", {
            target: { host: { name: CHECK_HOST } },
            key: newKey(ctx),
            fence: false,
          }),
        );
        if (canonical(none) !== canonical({ none: true }))
          throw new CheckFailed(
            `host.lookup of a key never used answered ${clip(canonical(none))}, not none`,
            [canonical(none)],
          );
      }
    } catch (err) {
      if (err instanceof CheckFailed)
        throw new CheckFailed(`round ${round} of ${repeat}: ${err.detail}`, err.evidence);
      throw err;
    }
  }
  const parts = ["a second release resolves"];
  parts.push(
    window === undefined
      ? "no dedupe declared, so no repeat was sent"
      : `a repeat inside the ${window} ms window returns the first result`,
  );
  parts.push(
    caps.lookup
      ? "lookup finds what was acquired and answers none for an unused key"
      : "no lookup declared",
  );
  return pass(`${repeat} rounds: ${parts.join("; ")}`);
}
