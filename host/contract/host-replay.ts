import { ErrorReply } from "../plugin/call-errors.js";
import { canonical } from "../plugin/load-rules.js";
import type { KeyCaps } from "../protocol/declaration.js";
import { inFresh } from "./fresh.js";
import { acquire, cleanUp, type Machine, newKey, release, statusUntil } from "./host-seam.js";
import type { RunContext, Session } from "./session.js";
import { CHECK_HOST } from "./target.js";
import { CheckFailed, describeCall, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The host seam as mu's replay meets it: the process that acquired the
// machine is SIGKILLed with its group the moment it answers, and every later
// question goes to a new process that never saw the acquire.

const EFFECT_MS = 60_000;
const NOWHERE = { host: { name: CHECK_HOST } };

async function repeatAndFind(
  b: Session,
  m: Machine,
  params: Record<string, string>,
  caps: KeyCaps,
) {
  if (caps.dedupe?.exact) {
    const again = await must(
      "a repeated host.acquire",
      b.call("host.acquire", { target: NOWHERE, key: m.key, params }, EFFECT_MS),
    );
    if (canonical(again) !== canonical(m.acquired))
      throw new CheckFailed(
        "the identical host.acquire sent to a new process did not return the first result",
        [`first: ${canonical(m.acquired)}`, `repeat: ${canonical(again)}`],
      );
  }
  if (caps.lookup) {
    const found = (await must(
      "host.lookup",
      b.call("host.lookup", { target: NOWHERE, key: m.key, fence: false }),
    )) as { found?: { handle?: string } };
    if (found.found?.handle !== m.acquired.handle)
      throw new CheckFailed(
        `host.lookup from a new process answered ${clip(canonical(found))}, not found with handle ${m.acquired.handle}`,
        [`acquire: ${canonical(m.acquired)}`, `lookup: ${canonical(found)}`],
      );
  }
}

/** A released machine's key was still acquired once: lookup answers found, never none. */
async function findReleased(c: Session, m: Machine): Promise<void> {
  const r = (await must(
    "host.lookup",
    c.call("host.lookup", { target: NOWHERE, key: m.key, fence: false }),
  )) as { found?: { handle?: string } };
  if (r.found?.handle !== m.acquired.handle)
    throw new CheckFailed(
      `host.lookup from a new process after the release answered ${clip(canonical(r))}, not found with handle ${m.acquired.handle}`,
      [`acquire: ${canonical(m.acquired)}`, `lookup: ${canonical(r)}`],
    );
}

/** A fenced lookup of a key never used: none, and from now on that key is closed. */
async function fence(p: Session, ctx: RunContext): Promise<string> {
  const key = newKey(ctx);
  const r = await must(
    "a fenced host.lookup",
    p.call("host.lookup", { target: NOWHERE, key, fence: true }),
  );
  if (canonical(r) !== canonical({ none: true }))
    throw new CheckFailed(
      `a fenced host.lookup of a key never used answered ${clip(canonical(r))}, not none`,
      [canonical(r)],
    );
  return key;
}

/**
 * After a fenced none, a late acquire of that key must make no machine, and
 * its error must be the truth. It goes to the check's first start, one older
 * than the fence, as an acquire held up in a process mu gave up on would.
 */
async function lateAcquireRefused(
  p: Session,
  key: string,
  params: Record<string, string>,
): Promise<string> {
  let result: unknown;
  let refusal: ErrorReply | undefined;
  try {
    result = await p.call("host.acquire", { target: NOWHERE, key, params }, EFFECT_MS);
  } catch (err) {
    if (!(err instanceof ErrorReply)) throw new CheckFailed(describeCall(err), [describeCall(err)]);
    refusal = err;
  }
  const after = (await must(
    "host.lookup",
    p.call("host.lookup", { target: NOWHERE, key, fence: false }),
  )) as { found?: { handle?: string } };
  const handle = (result as { handle?: string } | undefined)?.handle ?? after.found?.handle;
  const made = result !== undefined || canonical(after) !== canonical({ none: true });
  if (made) {
    const target = {
      host: { name: CHECK_HOST, instance: p.hello.instance, ...(handle ? { handle } : {}) },
    };
    const left = await p.call("host.release", { target, key }, EFFECT_MS).then(
      () => "",
      (err) => `; it could not be released (${describeCall(err)}): release key ${key} by hand`,
    );
    const what =
      result !== undefined
        ? "a host.acquire after a fenced host.lookup of its key answered none took effect"
        : refusal && (refusal.kind === "retryable" || refusal.kind === "permanent")
          ? `a fenced host.acquire answered ${refusal.kind}, which says nothing happened, yet host.lookup then found the machine`
          : "a host.acquire after a fenced host.lookup of its key answered none made a machine";
    throw new CheckFailed(`${what}${left}`, [
      result !== undefined ? `acquire: ${canonical(result)}` : describeCall(refusal),
      `lookup after: ${canonical(after)}`,
    ]);
  }
  return `an acquire after a fenced none was refused (${refusal?.kind ?? ""}) and made nothing`;
}

export async function hostReplay(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
  caps: KeyCaps,
): Promise<Outcome> {
  const said: string[] = [];
  let m: Machine | undefined;
  let fenced: string | undefined;
  try {
    m = await inFresh(s, (a) => acquire(a, params, newKey(ctx)));
    const held = m;
    await inFresh(s, async (b) => {
      await repeatAndFind(b, held, params, caps);
      await statusUntil(b, held, "up");
      await release(b, held, "host.release from a new process that never acquired the host");
    });
    fenced = await inFresh(s, async (c) => {
      await statusUntil(c, held, "gone");
      if (caps.lookup) await findReleased(c, held);
      await release(c, held, "a second host.release, from another new process");
      return caps.lookup && caps.fenceKey ? fence(c, ctx) : undefined;
    });
    said.push(
      `${caps.dedupe?.exact ? "the identical acquire returned the first result; " : ""}${caps.lookup ? "lookup found it up and released; " : ""}status up, released, then status gone and a second release resolved`,
    );
  } catch (err) {
    const evidence: string[] = [];
    await cleanUp(s, m, evidence);
    if (err instanceof CheckFailed)
      throw new CheckFailed(err.detail, [...err.evidence, ...evidence]);
    throw err;
  }
  if (fenced) said.push(await lateAcquireRefused(s, fenced, params));
  const missing: string[] = [];
  if (!caps.dedupe?.exact) missing.push("no exact dedupe declared");
  if (!caps.lookup) missing.push("no lookup declared");
  else if (!caps.fenceKey) missing.push("no fenceKey declared");
  return pass(
    `each step from a new process, the one that acquired killed: ${said.join("; ")}${missing.length ? ` (not exercised: ${missing.join("; ")})` : ""}`,
  );
}
