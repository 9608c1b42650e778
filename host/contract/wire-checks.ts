import type { InitializeResult } from "../protocol/declaration.js";
import { type RunContext, Session } from "./session.js";
import { profileTarget } from "./target.js";
import { fail, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The checks judged over every start of the run: each check's plugin
// process was watched, so a bad line, a leaked canary or an escaped process
// is caught whichever check provoked it. Each also has a start of its own
// that exercises what the other checks do not.

/** link.checkSteps for each declared phase: reads no other check makes. */
export async function probeMessages(ctx: RunContext, hello: InitializeResult): Promise<void> {
  const s = await Session.open(ctx, "messages", []);
  try {
    for (const phase of hello.seams.link?.checks ?? []) {
      // Only the lines matter here; an error reply is a valid message.
      await s
        .call("link.checkSteps", { target: ctx.linkTarget ?? profileTarget(hello), phase })
        .catch(() => {});
      if (s.proc.conn.state !== "open") break;
    }
  } finally {
    await s.close();
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const starts = (ctx: RunContext) => plural(ctx.logs.length, "start");

export function messages(ctx: RunContext): Outcome {
  const evidence = ctx.logs.flatMap((l) => l.wire.problems.map((p) => `[${l.check}] ${p}`));
  const lines = ctx.logs.reduce((n, l) => n + l.wire.lines, 0);
  if (evidence.length > 0)
    return fail(
      `${plural(evidence.length, "invalid message")} in ${plural(lines, "line")} from ${starts(ctx)}`,
      evidence,
    );
  return pass(
    `${plural(lines, "line")} from ${starts(ctx)}, each one strict JSON-RPC, UTF-8 and under 1 MiB, answering a request mu sent`,
  );
}

export function canary(ctx: RunContext): Outcome {
  const evidence: string[] = [];
  for (const l of ctx.logs) {
    for (const hit of l.wire.linesWith(ctx.canary)) {
      const at = hit.line.indexOf(ctx.canary);
      // Centre the excerpt on the leak, and show where it was, not its value.
      const from = Math.max(0, at - 80);
      const excerpt = hit.line
        .slice(from, at + ctx.canary.length + 80)
        .replaceAll(ctx.canary, "<canary>");
      evidence.push(`[${l.check}] ${hit.stream}: ${from > 0 ? "…" : ""}${clip(excerpt)}`);
    }
  }
  if (evidence.length > 0)
    return fail(
      `the value of MU_PLUGIN_CANARY came back in ${plural(evidence.length, "line")}`,
      evidence,
    );
  return pass(`MU_PLUGIN_CANARY never appeared on stdout or stderr in ${starts(ctx)}`);
}

export function containment(ctx: RunContext): Outcome {
  const evidence = ctx.logs.flatMap((l) =>
    l.escapees.map(
      (e) =>
        `[${l.check}] pid ${e.pid} (pgid ${e.pgid}, sid ${e.sid}), not in the plugin's group ${l.pgid ?? "?"}, found by ${e.by}: ${clip(e.cmdline) || "(no command line)"}; killed`,
    ),
  );
  if (evidence.length > 0)
    return fail(
      `${plural(evidence.length, "process", "processes")} the plugin started left its process group`,
      evidence,
    );
  const by = ctx.launcher
    ? "by environment marker and by ancestry under a child subreaper"
    : `by environment marker only (no child subreaper: ${ctx.noLauncher ?? "not set up"})`;
  return pass(
    `every process started in ${starts(ctx)} stayed in the plugin's group, watched ${by}`,
  );
}
