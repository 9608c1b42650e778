import { ErrorReply } from "../plugin/call-errors.js";
import { canonical } from "../plugin/load-rules.js";
import type { KeyCaps } from "../protocol/declaration.js";
import { inFresh } from "./fresh.js";
import { acquire, cleanUp, type Machine, newKey } from "./host-seam.js";
import type { RunContext, Session } from "./session.js";
import { CHECK_HOST } from "./target.js";
import { CheckFailed, describeCall, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// What a provider's answers prove beyond the replay: the facts an up status
// patches, and a refusal's word that nothing happened.

const EFFECT_MS = 60_000;
const NOWHERE = { host: { name: CHECK_HOST } };
const FACTS = ["deadlineAt", "idleReclaimMs", "maxJobs"] as const;
type Fact = (typeof FACTS)[number];
type Seen = Partial<Record<Fact, number | null>>;

/** Releases a machine the check holds, whatever failed; names it if that fails too. */
export async function holding<T>(
  s: Session,
  get: () => Machine | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  let failure: unknown;
  let out: T | undefined;
  try {
    out = await fn();
  } catch (err) {
    failure = err;
  }
  const evidence: string[] = [];
  await cleanUp(s, get(), evidence);
  if (failure instanceof CheckFailed)
    throw new CheckFailed(failure.detail, [...failure.evidence, ...evidence]);
  if (failure !== undefined) throw failure;
  if (evidence.length > 0)
    throw new CheckFailed(`the machine the check acquired could not be released`, evidence);
  return out as T;
}

async function upFacts(p: Session, m: Machine, who: string): Promise<Seen> {
  const st = (await must("host.status", p.call("host.status", { target: m.target }))) as Record<
    string,
    unknown
  >;
  if (st.state !== "up")
    throw new CheckFailed(
      `host.status from ${who} answered ${st.state} for the machine just acquired, not up`,
      [canonical(st)],
    );
  const seen: Seen = {};
  for (const f of FACTS) if (f in st) seen[f] = st[f] as number | null;
  return seen;
}

/**
 * Facts are a patch: a null clears one, an absent one keeps its value. With
 * nothing done to the machine meanwhile, a fact one answer clears and a
 * later one sends back unchanged was never cleared: the null was a fact the
 * answering process had not read, and mu would have dropped a true value.
 */
export async function hostFacts(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
  caps: KeyCaps,
): Promise<Outcome> {
  let m: Machine | undefined;
  const answers: { who: string; seen: Seen }[] = [];
  await holding(
    s,
    () => m,
    async () => {
      m = await inFresh(s, (a) => acquire(a, params, newKey(ctx)));
      const held = m;
      answers.push({ who: "host.acquire", seen: { ...held.acquired } as Seen });
      const asks: [string, (p: Session) => Promise<unknown>][] = [
        ["a new process, as its first call", async () => {}],
        [
          caps.lookup ? "a new process, after its lookup" : "another new process",
          async (p) => {
            if (caps.lookup)
              await must(
                "host.lookup",
                p.call("host.lookup", { target: NOWHERE, key: held.key, fence: false }),
              );
          },
        ],
      ];
      for (const [who, before] of asks)
        answers.push({
          who: `host.status from ${who}`,
          seen: await inFresh(s, async (p) => {
            await before(p);
            return upFacts(p, held, who);
          }),
        });
    },
  );
  const sent = new Set<Fact>();
  for (const f of FACTS) {
    let cleared: { who: string; was: number } | undefined;
    let last: number | undefined;
    for (const a of answers) {
      const v = a.seen[f];
      if (v === undefined) continue;
      sent.add(f);
      if (v === null) {
        if (last !== undefined) cleared = { who: a.who, was: last };
        last = undefined;
      } else if (cleared && v === cleared.was) {
        throw new CheckFailed(
          `${cleared.who} cleared ${f} with null, then ${a.who} sent it back unchanged (${v}): null clears a fact, so leave out one the process has not read`,
          answers.map((x) => `${x.who}: ${canonical(x.seen)}`),
        );
      } else last = v;
    }
  }
  const told = [...sent];
  return pass(
    told.length === 0
      ? "neither the acquire nor the status of its machine from two new processes sent a fact (not exercised: no facts to patch)"
      : `the facts ${told.join(", ")} read the same through the acquire and the status of its machine from two new processes, none cleared and sent back`,
  );
}

/**
 * A refusal (retryable or permanent) says nothing happened. The check asks
 * for something a provider may well refuse, an acquire with a --param no one
 * gave it, and if refused, a lookup of the key must find nothing.
 */
export async function hostErrors(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
  caps: KeyCaps,
): Promise<Outcome> {
  const key = newKey(ctx);
  const odd = { ...params, "mu-check-unknown": "1" };
  let made: Machine | undefined;
  let refusal: ErrorReply | undefined;
  let reply: { handle?: string } | undefined;
  const target = (handle: string) => ({
    host: { name: CHECK_HOST, handle, instance: s.hello.instance },
  });
  const hold = (handle: string, acquired: unknown) => {
    made = {
      key,
      acquired: acquired as Machine["acquired"],
      target: target(handle),
      released: false,
    };
  };
  return holding(
    s,
    () => made,
    async () => {
      try {
        reply = (await s.call(
          "host.acquire",
          { target: NOWHERE, key, params: odd },
          EFFECT_MS,
        )) as { handle?: string };
      } catch (err) {
        if (!(err instanceof ErrorReply))
          throw new CheckFailed(failedAcquire(err), [describeCall(err)]);
        refusal = err;
      }
      if (reply?.handle) {
        hold(reply.handle, reply);
        return pass(
          "not provoked: an acquire with a --param no one gave (mu-check-unknown) made a machine, released again; no retryable or permanent error met",
        );
      }
      const kind = refusal?.kind ?? "";
      if (kind !== "retryable" && kind !== "permanent") {
        await s.call("host.release", { target: NOWHERE, key }, EFFECT_MS).catch(() => {});
        return pass(
          `not provoked: an acquire with a --param no one gave answered ${kind}, which promises nothing; released by key`,
        );
      }
      if (!caps.lookup)
        return pass(
          `an acquire with a --param no one gave answered ${kind} (not exercised: no lookup declared to show it made nothing)`,
        );
      const after = (await must(
        "host.lookup",
        s.call("host.lookup", { target: NOWHERE, key, fence: false }),
      )) as { found?: { handle?: string } };
      if (after.found?.handle) {
        hold(after.found.handle, after.found);
        throw new CheckFailed(
          `host.acquire answered ${kind}, which says nothing happened, yet host.lookup then found the machine`,
          [describeCall(refusal), `lookup after: ${clip(canonical(after))}`],
        );
      }
      return pass(
        `an acquire with a --param no one gave was refused (${kind}) and a lookup found nothing${kind === "permanent" ? " (no retryable met)" : " (no permanent met)"}`,
      );
    },
  );
}

const failedAcquire = (err: unknown) =>
  `host.acquire with an unknown --param: ${describeCall(err)}`;
