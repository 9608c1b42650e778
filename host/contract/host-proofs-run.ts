import type { InitializeResult, KeyCaps } from "../protocol/declaration.js";
import { hostGone } from "./host-gone.js";
import { hostErrors, hostFacts } from "./host-proof.js";
import { hostInFlight } from "./in-flight.js";
import type { RunContext, Session } from "./session.js";
import { type CheckId, type Outcome, skip, type Verdict } from "./verdict.js";

// The host checks after the replay, in the suite's order. The facts and the
// in-flight watch read the machine from processes that did not acquire it,
// as host.replay does first: when that failed, they would only fail again
// for its reason.

type HostCheck = (
  id: CheckId,
  fn: (s: Session, h: InitializeResult) => Promise<Outcome>,
) => () => Promise<Outcome>;

const capsOf = (h: InitializeResult): KeyCaps =>
  h.seams.host?.acquire ?? { lookup: false, fenceKey: false };

export async function runHostProofs(
  ctx: RunContext,
  run: (id: CheckId, body: () => Promise<Outcome>) => Promise<void>,
  hostCheck: HostCheck,
  out: readonly Verdict[],
  params: Record<string, string>,
): Promise<void> {
  const afterReplay =
    (fn: (s: Session, h: InitializeResult) => Promise<Outcome>) =>
    (s: Session, h: InitializeResult) =>
      out.find((v) => v.id === "host.replay")?.result === "fail"
        ? Promise.resolve(
            skip(
              "host.replay did not pass, and this check reads the machine from new processes as it does",
            ),
          )
        : fn(s, h);
  await run(
    "host.gone",
    hostCheck(
      "host.gone",
      afterReplay((s) => hostGone(ctx, s, params)),
    ),
  );
  await run(
    "host.facts",
    hostCheck(
      "host.facts",
      afterReplay((s, h) => hostFacts(ctx, s, params, capsOf(h))),
    ),
  );
  await run(
    "host.errors",
    hostCheck("host.errors", (s, h) => hostErrors(ctx, s, params, capsOf(h))),
  );
  await run(
    "host.inflight",
    hostCheck(
      "host.inflight",
      afterReplay((s, h) => hostInFlight(ctx, s, params, capsOf(h))),
    ),
  );
}
