import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { EXIT, type ExitCode, UsageError } from "../errors.js";
import { findLinkHost } from "../hosts/link-host.js";
import { ErrorReply } from "../plugin/call-errors.js";
import { mapCallError } from "../seams/call.js";
import { holdingSlot, openLink } from "../seams/link.js";
import { openStore } from "../store/index.js";
import { withPlugins } from "./with-plugins.js";

// mu host check: the phases the plugin's seams contribute steps to, as one
// checklist. A handback step or a human error hands the check to a person:
// the steps after it are not asked for.

const PHASES = ["template", "reach", "agent"] as const;
type Phase = (typeof PHASES)[number];
const READ_MS = 10_000;
/** The harness the agent phase asks about when none is named: spawn's default. */
const DEFAULT_HARNESS = "claude";

interface Step {
  step: string;
  ok: boolean | null | "warn";
  detail: string;
}

export interface CheckLine {
  phase: Phase;
  step: string;
  result: "pass" | "fail" | "skip" | "warn" | "handback";
  detail: string;
}

const MARK: Record<CheckLine["result"], string> = {
  pass: "ok  ",
  fail: "FAIL",
  skip: "skip",
  warn: "warn",
  handback: "HAND",
};

export async function hostCheck(
  io: Io,
  name: string,
  opts: { phase?: string; json?: boolean; harness?: string },
): Promise<ExitCode> {
  if (opts.phase !== undefined && !PHASES.includes(opts.phase as Phase)) {
    throw new UsageError(
      "host.check.phase",
      "usage",
      `--phase '${opts.phase}' is not one of ${PHASES.join(", ")}`,
    );
  }
  const h = await openStore(io.ports).read((db) => findLinkHost(db, name));
  const lines: CheckLine[] = [];
  await withPlugins(io, async (sup) => {
    const l = await openLink(io, sup, name, h);
    const { proc } = await sup.ready(h.reg, ["link"]);
    // Each seam contributes steps to the phases its `checks` names: the link
    // first, then the job seam when the plugin runs jobs here.
    const { hello } = await sup.ready(h.reg, ["link"]);
    const bySeam: [string, Set<string>][] = [["link.checkSteps", new Set(l.link.checks)]];
    if (hello.seams.job) bySeam.push(["job.checkSteps", new Set(hello.seams.job.checks)]);
    const checked = PHASES.filter((p) => bySeam.some(([, c]) => c.has(p)));
    const phases = checked.filter((p) => opts.phase === undefined || opts.phase === p);
    // A phase no seam has steps for would "pass" with nothing run.
    if (opts.phase !== undefined && phases.length === 0) {
      throw new UsageError(
        "host.check.phase",
        "usage",
        `no seam of plugin '${h.reg.name}' has steps for the ${opts.phase} phase on host ${name} (it checks: ${checked.join(", ") || "nothing"})`,
        {
          hint:
            checked.length > 0
              ? `run mu host check ${name} for those`
              : "there is nothing to check on this host",
        },
      );
    }
    // The repository the profile names is what the plugin should check there.
    const repo = h.profile?.repo;
    const root = repo ? { root: repo } : {};
    // The whole check is one use of the host: it holds one channel throughout.
    await holdingSlot(l, async () => {
      for (const [phase, method] of phases.flatMap((p) =>
        bySeam.filter(([, c]) => c.has(p)).map(([m]) => [p, m] as const),
      )) {
        let steps: Step[];
        try {
          steps = (await proc.conn.request(
            method,
            {
              target: h.target,
              phase,
              ...(method === "link.checkSteps" ? root : {}),
              ...(phase === "agent" ? { agent: opts.harness ?? DEFAULT_HARNESS } : {}),
            },
            { timeoutMs: READ_MS },
          )) as Step[];
        } catch (err) {
          if (err instanceof ErrorReply && err.kind === "human") {
            lines.push({
              phase,
              step: "handback",
              result: "handback",
              detail: `${err.message}${err.remedy ? `; ${err.remedy}` : ""}`,
            });
            return;
          }
          throw mapCallError(h.reg.name, { method, effect: false }, err);
        }
        for (const s of steps) {
          if (s.step === "handback") {
            lines.push({ phase, step: "handback", result: "handback", detail: s.detail });
            return;
          }
          const result =
            s.ok === true ? "pass" : s.ok === false ? "fail" : s.ok === null ? "skip" : "warn";
          lines.push({ phase, step: `${h.reg.name}:${s.step}`, result, detail: s.detail });
        }
      }
    });
  });
  const failed = lines.some((l) => l.result === "fail" || l.result === "handback");
  if (opts.json) printJson(io, { host: name, ok: !failed, steps: lines });
  else {
    for (const l of lines) io.out(`${MARK[l.result]}  ${l.phase}  ${l.step}: ${l.detail}\n`);
    if (lines.length === 0)
      io.out(`${name}: nothing to check (no seam of its plugin declares a check)\n`);
    else io.out(failed ? `${name}: check failed\n` : `${name}: check passed\n`);
  }
  return failed ? EXIT.unavailable : EXIT.ok;
}
