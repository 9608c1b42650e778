import { hideCanary } from "./canary.js";
import type { RunContext } from "./session.js";
import {
  CheckFailed,
  type CheckId,
  describeCall,
  fail,
  type Outcome,
  type Verdict,
} from "./verdict.js";

// How the suite runs a check: timed, a throw turned into its failure, the
// canary kept out of what it says, and its verdict given as it comes.

export async function timed(
  ctx: RunContext,
  id: CheckId,
  body: () => Promise<Outcome>,
  emit: (v: Verdict) => void,
): Promise<Verdict> {
  const t0 = ctx.io.ports.clock.now();
  let o: Outcome;
  try {
    o = await body();
  } catch (err) {
    o =
      err instanceof CheckFailed
        ? fail(err.detail, err.evidence)
        : fail(`the check could not run: ${describeCall(err)}`, [describeCall(err)]);
  }
  // Evidence quotes what the plugin sent; the canary must not ride along
  // into the terminal, --json or a JUnit file.
  const mask = (t: string) => hideCanary(t, ctx.canary);
  const v: Verdict = {
    id,
    ...o,
    detail: mask(o.detail),
    evidence: o.evidence.map(mask),
    ms: ctx.io.ports.clock.now() - t0,
  };
  emit(v);
  return v;
}

/** A check in a list run at once: its id, its body, and the checks it starts after. */
export type Together = [CheckId, () => Promise<Outcome>, CheckId[]?];

/**
 * `run` runs one check; `runTogether` runs a list at once unless told to go
 * one by one, each check starting once those it names are done, and gives
 * each verdict in the list's order either way.
 */
export function checkRunner(ctx: RunContext, out: Verdict[], emit: (v: Verdict) => void) {
  const run = async (id: CheckId, body: () => Promise<Outcome>): Promise<void> => {
    out.push(await timed(ctx, id, body, emit));
  };
  const runTogether = async (oneByOne: boolean, checks: Together[]): Promise<void> => {
    if (oneByOne) {
      for (const [id, body] of checks) await run(id, body);
      return;
    }
    const done: (Verdict | undefined)[] = [];
    let next = 0;
    const finished = new Map<CheckId, () => void>();
    const ended = new Map(
      checks.map(([id]) => [id, new Promise<void>((r) => finished.set(id, r))] as const),
    );
    await Promise.all(
      checks.map(async ([id, body, after = []], i) => {
        await Promise.all(after.map((a) => ended.get(a)));
        await timed(ctx, id, body, (v) => {
          done[i] = v;
          for (let d = done[next]; d; d = done[next]) {
            out.push(d);
            emit(d);
            next++;
          }
        });
        finished.get(id)?.();
      }),
    );
  };
  return { run, runTogether };
}
