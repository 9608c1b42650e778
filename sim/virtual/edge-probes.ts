import { MAX_LINE_BYTES } from "../../host/plugin/framing.js";
import { STDERR_LINE_MAX } from "../../host/plugin/stderr-line.js";
import { CANARY_PIECE } from "../runner/judge.js";
import { canaryFor } from "./invariants.js";
import type { Rand, Script } from "./workload-script.js";

// Probes at the edges of what the agent workloads otherwise reach, each a
// short run of verbs on a name of its own, drawn from a stream of their own
// so the rest of a seed's workload stays as it was. They run after the
// workload's own verbs and before it settles, each from calm, on the
// profile host (added again if a verb removed it): what they
// provoke (a registration under another plugin's executable, a view that
// dies after a slow start, a traced invocation, a plugin that stops while a
// wait still watches, a channel that restarts before a wait, a retention
// pass while a job runs, a secret across the cut of a plugin's stderr
// line) is judged by the model (sim/model/edges.ts), the trace invariant
// (trace-check.ts) and the canary check (invariants.ts).

/** Where a traced step writes its trace: the virtual engine keeps the lines in memory. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
export const TRACE_DIR = "${root}/trace";

/**
 * How often each probe is drawn, each on its own. Retention needs an
 * at-start kind and a pending start's verb a kind without lookup to show
 * most: those two are drawn more often.
 */
const SHARES = [0.3, 0.3, 0.3, 0.3, 0.3, 0.5, 0.3, 0.6, 0.3];

const DAY_MS = 86_400_000;

/**
 * A message's length at which a send to agent s on the profile host fills
 * the line limit to the byte, counting its id and deadline at their widest:
 * the limit less the rest of the request as mu writes it.
 */
const NEAR_LIMIT = MAX_LINE_BYTES - 376;

/** A world whose plugin calls itself "other". */
const OTHER_WORLD = JSON.stringify({
  preset: "link-job",
  instance: "sim-1",
  hello: {
    plugin: { name: "other" },
    seams: { channel: { name: "other" }, job: { channel: "other" } },
  },
});

const bigText = (n: number) => `big-${"x".repeat(n - 4)}`;

/**
 * How far past the 400 shown the stderr probe's second canary may start:
 * mu holds 400 and the longest secret's length (the canary is an explorer
 * run's only secret), so from one past 400 it runs on past what mu holds;
 * once the first canary is masked, the line is shorter by the canary less
 * [masked], and the second must still show CANARY_PIECE of its characters.
 */
const CANARY_PAST_MAX = canaryFor(0).length - "[masked]".length - CANARY_PIECE;

export interface ProbeCtx {
  host: string;
  /** The kind takes its first prompt with the start. */
  atStart: boolean;
  next: () => number;
}

export function edgeProbes(w: Script, r: Rand, c: ProbeCtx): void {
  const send = (what: string) => ` --send ${what}-${c.next()}`;
  const first = (what: string) => (c.atStart ? send(what) : "");
  // Drawn up front, so which probes a seed runs does not depend on the world.
  const on = SHARES.map((share) => r() < share);
  const canaryPast = 1 + Math.floor(r() * CANARY_PAST_MAX);
  // Each probe starts in calm: no fault of the workload's left, and the late
  // answers of a plugin that outlived a killed mu waited out.
  const calm = () => w.clear();
  if (on.some(Boolean)) {
    calm();
    w.aside(`host add ${c.host} --plugin sim`);
  }
  if (on[0]) {
    calm();
    // The trust rule: a plugin registered under another plugin's executable,
    // though it answers to the name it is registered under.
    w.steps.push({
      sh: `mkdir -p \${world}/other && echo '${OTHER_WORLD}' > \${world}/other/world.json`,
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
    w.aside("plugin add other -- ${sim} --world ${world}/other");
  }
  if (on[1]) {
    calm();
    // A slow start, then a view that the backend reports and that dies a
    // moment later: its readiness window runs from the pane's opening.
    w.setFaults([{ on: "job.start", do: { delayMs: 2_000 } }]);
    w.aside(`agent spawn v --host ${c.host}${first("view")}`, { MU_MUX_SIM: "dies" });
    w.clear();
    w.aside("agent close v");
    w.aside("agent forget v");
  }
  if (on[2]) {
    calm();
    // A traced spawn carrying a first prompt, then a traced message and
    // answer: none of their text may be in the trace in clear. No --command:
    // the kinds drawn do not honour it, so the spawn would stop at its usage
    // check and nothing would reach the wire (cli/trace-argv-words traces one).
    const traced = { MU_TRACE_DIR: TRACE_DIR };
    w.aside(`agent spawn t --host ${c.host}${send("secret-prompt")}`, traced);
    w.aside(`agent send t secret-message-${c.next()}`, traced);
    w.aside(`agent answer t secret-answer-${c.next()} Enter`, traced);
    w.aside("agent close t");
    w.aside("agent forget t");
  }
  // A turn may take a minute: each wait allows two.
  if (on[3]) {
    calm();
    // The plugin stops while a wait on two agents still watches one of them.
    w.aside(`agent spawn p --host ${c.host}${send("p")}`);
    w.aside(`agent spawn q --host ${c.host}${first("q")}`);
    w.aside("wait p --timeout 120");
    w.setFaults([
      { on: "channel.watch", match: { "target.agent.name": "q" }, do: { exitAfterMs: 500 } },
    ]);
    w.aside("wait p q --timeout 5");
    w.clear();
    for (const a of ["p", "q"]) w.aside(`agent close ${a}`);
  }
  if (on[4]) {
    calm();
    // The channel restarts on its own just before a wait: the next wait counts
    // the new incarnation's turns from none.
    w.aside(`agent spawn r --host ${c.host}${send("r")}`);
    w.aside("wait r --timeout 120");
    // A second turn, so the count the restart must reset is not already none.
    w.aside(`agent send r again-${c.next()}`);
    w.aside("wait r --timeout 120");
    w.setFaults([
      { on: "channel.watch", match: { "target.agent.name": "r" }, do: { restartChannel: true } },
    ]);
    w.aside("wait r --timeout 120");
    w.clear();
    w.aside("wait r --timeout 1");
    w.aside("agent close r");
  }
  if (on[6]) {
    calm();
    // Messages at the transport's line limit: each must either go out
    // within it with the widest id and deadline a later send could carry, or
    // be refused before anything is written.
    w.aside(`agent spawn s --host ${c.host}${first("s")}`);
    for (const over of [12, 34]) w.aside(`agent send s ${bigText(NEAR_LIMIT + over)}`);
    w.aside("agent close s");
  }
  if (on[7]) {
    calm();
    // A spawn that dies once its start is on the wire: `mu state` names what
    // settles it, now and once past a dedupe window and any in-flight bound.
    w.aside(`agent spawn g --host ${c.host}${first("g")}`, {
      MU_CRASH_AT: "effect.request-written",
    });
    w.aside("state");
    w.pass(700_000);
    w.aside("state");
    w.aside("agent close g");
    w.aside("agent forget g");
  }
  if (on[8]) {
    calm();
    // A plugin that fails its handshake with the canary twice on its first
    // stderr line: once at the start, once beginning just past the 400
    // characters mu shows and running past what it holds (400 and the
    // longest secret). Masking the first pulls the second's start into view
    // unless mu masks the held end too. Traced with content, so the trace's
    // copy of the line is judged as well.
    const at = STDERR_LINE_MAX + canaryPast;
    w.setFaults([
      { on: "initialize", times: "always", do: { leakCanary: "stderr", at: [0, at] } },
      { on: "initialize", times: "always", do: { crash: "before" } },
    ]);
    w.aside(`host check ${c.host}`, { MU_TRACE_DIR: TRACE_DIR, MU_TRACE_CONTENT: "1" });
    calm();
  }
  if (on[5] && c.atStart) {
    calm();
    // Retention: a week and more after every job the workload ended, one
    // pass moves their receipts; a job then started (its first prompt's
    // receipt written in its creation millisecond) and left running a week
    // more must keep its own through the next pass.
    w.pass(8 * DAY_MS);
    w.aside(`task add k${c.next()}`);
    w.aside("state");
    w.aside(`agent spawn k --host ${c.host}${send("keep")}`);
    w.pass(8 * DAY_MS);
    w.aside(`task add k${c.next()}`);
    w.aside("state");
    w.aside("agent close k");
  }
}
