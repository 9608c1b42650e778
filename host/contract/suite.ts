import type { InitializeResult, LinkSeam } from "../protocol/declaration.js";
import { eof } from "./eof.js";
import { handshake } from "./handshake.js";
import { runHostProofs } from "./host-proofs-run.js";
import { hostReplay } from "./host-replay.js";
import { idempotency, lifecycle, newKey, withMachine } from "./host-seam.js";
import { noteDirs, tidy } from "./leftovers.js";
import { linkCwd } from "./link-cwd.js";
import { linkFetch, linkPush } from "./link-git.js";
import { linkGitTimeout } from "./link-git-timeout.js";
import { linkOutput } from "./link-output.js";
import { linkExec } from "./link-roundtrip.js";
import { linkScriptSize } from "./link-script-size.js";
import { linkTimeout, ownSession, timeoutFor } from "./link-timeout.js";
import { checkRunner } from "./run-checks.js";
import { inSession, type RunContext, Session } from "./session.js";
import { AGENT_CHECKS, runAgentCheck } from "./suite-jobs.js";
import { CHECK_HOST, type LinkPlace, profileTarget, type Target } from "./target.js";
import { type CheckId, type Cleanup, type Outcome, skip, type Verdict } from "./verdict.js";
import { canary, containment, messages, probeMessages } from "./wire-checks.js";
import { probeDuringCall } from "./wire-watch.js";

// The order the checks run in and when each is skipped. Seam checks that
// make real things run only for seams the author named; the wire checks come
// last, since they judge every start the others made.

export type CheckedSeam = "link" | "host" | "job" | "channel";

export interface SuiteOptions {
  seams: ReadonlySet<CheckedSeam>;
  params: Record<string, string>;
  repeat: number;
  /** --host: a host mu knows, where the link checks run instead. */
  host?: { name: string; target: Target; root?: string };
}

export async function runSuite(
  ctx: RunContext,
  opts: SuiteOptions,
  emit: (v: Verdict) => void,
): Promise<{ verdicts: Verdict[]; cleanup: Cleanup }> {
  const out: Verdict[] = [];
  const { run, runTogether } = checkRunner(ctx, out, emit);
  const needs = [...opts.seams];
  let hello: InitializeResult | undefined;
  await run("handshake", async () => {
    const r = await handshake(ctx, needs);
    hello = r.hello;
    return r.outcome;
  });

  const loaded = hello;
  const unloaded = skip("the plugin did not pass the handshake; fix that first");
  const gate = (fn: (h: InitializeResult) => Promise<Outcome>) => () =>
    loaded ? fn(loaded) : Promise.resolve(unloaded);
  const hostNamed = opts.seams.has("host");

  // The link checks, each on a start of its own.
  const onLink =
    (id: CheckId, fn: (s: Session, place: LinkPlace, link: LinkSeam) => Promise<Outcome>) =>
    (h: InitializeResult): Promise<Outcome> => {
      const link = h.seams.link;
      if (!link) return Promise.resolve(skip("the plugin declares no link seam"));
      const aim = opts.host;
      if (aim) {
        const place = { target: aim.target, root: aim.root, label: `on host ${aim.name}` };
        return inSession(ctx, id, ["link"], (s) => fn(s, place, link));
      }
      if (!h.seams.host) {
        const place = { target: profileTarget(h), label: `on host ${CHECK_HOST}` };
        return inSession(ctx, id, ["link"], (s) => fn(s, place, link));
      }
      if (!hostNamed)
        return Promise.resolve(
          skip(
            "a provider's link runs on machines it acquired; add --seam host to let the suite acquire one, or --host to name one",
          ),
        );
      return inSession(ctx, id, ["host"], (s) =>
        withMachine(s, opts.params, newKey(ctx), (m) =>
          fn(
            s,
            { target: m.target, label: `on the machine it acquired (${m.acquired.handle})` },
            link,
          ),
        ),
      );
    };
  let roundTripMs: number | undefined;
  // Checks that share nothing, each on starts of its own, run at once unless
  // a check would acquire a machine (a provider's link would get one per
  // check); their verdicts still come out in the suite's order.
  const oneByOne = !opts.host && !!loaded?.seams.host;
  await runTogether(oneByOne, [
    ["eof", gate((h) => eof(ctx, h))],
    [
      "link.exec",
      gate(
        onLink("link.exec", async (s, place) => {
          const proof = await linkExec(s, place, `${ctx.runId}-exec`, (n) =>
            ctx.io.ports.random.hex(n),
          );
          roundTripMs = proof.roundTripMs;
          return proof.outcome;
        }),
      ),
    ],
  ]);
  const afterExec =
    (
      id: CheckId,
      fn: (s: Session, place: LinkPlace, link: LinkSeam) => Promise<Outcome>,
      absent: (link: LinkSeam) => string | undefined = () => undefined,
    ) =>
    (h: InitializeResult): Promise<Outcome> => {
      // Before any start: an undeclared capability needs no plugin, nor a machine.
      const why = h.seams.link && absent(h.seams.link);
      if (why) return Promise.resolve(skip(why));
      if (out.find((v) => v.id === "link.exec")?.result === "fail")
        return Promise.resolve(
          skip("link.exec did not pass, and this check reads its results back through link.exec"),
        );
      return onLink(id, fn)(h);
    };
  // Only where push or fetch itself passed: a fake one fails there, not here.
  const proven = (id: CheckId) => out.find((v) => v.id === id)?.result === "pass";
  // These read their results back through link.exec, so they wait on its
  // pass, and run at once: git-timeout after the push and fetch it relies
  // on, link.timeout once the checks that would slow it are done.
  await runTogether(oneByOne, [
    [
      "link.push",
      gate(
        afterExec(
          "link.push",
          (s, place, link) =>
            linkPush(s, place, link, `${ctx.runId}-push`, ctx.io.ports.random.hex(16)),
          (link) => (link.push ? undefined : "the link does not declare push: true"),
        ),
      ),
    ],
    [
      "link.fetch",
      gate(
        afterExec(
          "link.fetch",
          (s, place) => linkFetch(s, place, `${ctx.runId}-fetch`, ctx.io.ports.random.hex(16)),
          (link) =>
            link.fetch
              ? undefined
              : "the link declares fetch: false (mu fetches with the profile's --fetch template)",
        ),
      ),
    ],
    [
      "link.timeout",
      gate(
        afterExec("link.timeout", (s, place, link) => {
          s.log.spare = ownSession(`mu-check-${ctx.runId}`);
          return linkTimeout(s, link, place, `mu-check-${ctx.runId}`, timeoutFor(roundTripMs ?? 0));
        }),
      ),
      // Its limit is set from link.exec's round trip, which the others would
      // stretch: the script could then begin past the limit.
      ["link.push", "link.fetch", "link.cwd", "link.script-size", "link.output"],
    ],
    ["link.cwd", gate(afterExec("link.cwd", (s, place) => linkCwd(s, place, `${ctx.runId}-cwd`)))],
    [
      "link.script-size",
      gate(
        afterExec("link.script-size", (s, place, link) =>
          linkScriptSize(s, place, link, ctx.io.ports.random.hex(32)),
        ),
      ),
    ],
    ["link.output", gate(afterExec("link.output", (s, place) => linkOutput(s, place)))],
    [
      "link.git-timeout",
      gate(
        afterExec(
          "link.git-timeout",
          (s, place) =>
            linkGitTimeout(
              s,
              place,
              { fetch: proven("link.fetch"), push: proven("link.push") },
              `${ctx.runId}-git-timeout`,
            ),
          () =>
            proven("link.fetch") || proven("link.push")
              ? undefined
              : "neither link.push nor link.fetch passed (or is declared)",
        ),
      ),
      ["link.push", "link.fetch"],
    ],
  ]);
  const hostCheck = (id: CheckId, fn: (s: Session, h: InitializeResult) => Promise<Outcome>) =>
    gate(async (h) => {
      if (!h.seams.host) return skip("the plugin declares no host seam");
      if (!hostNamed)
        return skip("it acquires a real machine: add --seam host and the --param values it needs");
      return inSession(ctx, id, ["host"], (s) => fn(s, h));
    });
  await run(
    "host.lifecycle",
    hostCheck("host.lifecycle", (s) => lifecycle(ctx, s, opts.params)),
  );
  await run(
    "host.idempotency",
    hostCheck("host.idempotency", (s, h) =>
      idempotency(
        ctx,
        s,
        opts.params,
        h.seams.host?.acquire ?? { lookup: false, fenceKey: false },
        opts.repeat,
      ),
    ),
  );

  await run(
    "host.replay",
    hostCheck("host.replay", (s, h) =>
      hostReplay(ctx, s, opts.params, h.seams.host?.acquire ?? { lookup: false, fenceKey: false }),
    ),
  );

  await runHostProofs(ctx, run, hostCheck, out, opts.params);

  // Job and channel checks start real jobs: only for the seams named.
  const declared = (["link", "job"] as const).filter((n) => loaded?.seams[n]);
  const noted =
    loaded && (opts.seams.has("job") || opts.seams.has("channel"))
      ? await noteDirs(ctx, loaded, () => Session.open(ctx, "cleanup", declared))
      : false;
  for (const c of AGENT_CHECKS)
    await run(
      c.id,
      gate((h) =>
        runAgentCheck(
          ctx,
          { ...opts, failed: (id) => out.some((v) => v.id === id && v.result === "fail") },
          c,
          h,
        ),
      ),
    );

  // The probes' starts count for every wire check, so all of them run
  // before any wire verdict is given.
  if (loaded) {
    await Promise.all([
      probeMessages(ctx, loaded).catch(() => {}),
      probeDuringCall(ctx, loaded).catch(() => {}),
    ]);
  }
  await run("messages", async () => messages(ctx));
  await run("canary", async () => canary(ctx));
  await run("containment", async () => containment(ctx));
  // After every verdict: the sweep's own start is judged by nothing.
  const cleanup = loaded
    ? await tidy(ctx, loaded, () => Session.open(ctx, "cleanup", declared), noted)
    : { removed: [], left: [] };
  return { verdicts: out, cleanup };
}
