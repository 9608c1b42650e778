import type { Scenario, Signal, Step } from "../runner/scenario.js";
import { type Invocation, ownEndAt } from "./read.js";

// A scenario from the traces of one session: the world replays the recorded
// plugin processes in order, each step is one recorded mu invocation with
// how it ended, and the last expect is what mu's database held at the end.
// The maintainer then names the rule and sets the exit code that should
// have been: the scenario fails until the bug is fixed.

export interface FromTrace {
  id: string;
  /** When the traces were recorded, for the about text. */
  when?: string;
}

/**
 * `plugin add NAME -- <argv>`: the real plugin becomes the sim replaying it,
 * under a launcher named as the trust rules want (mu-plugin-NAME).
 */
function replayed(argv: string[]): { argv: string[]; launcher?: string } {
  const dashes = argv.indexOf("--");
  if (argv[0] !== "plugin" || argv[1] !== "add" || dashes === -1) return { argv };
  const name = argv.slice(2, dashes).find((w) => !w.startsWith("-")) ?? "sim";
  // The runner's own placeholders, not template strings.
  const world = ["--world", "$" + "{world}"];
  if (name === "sim") return { argv: [...argv.slice(0, dashes + 1), "$" + "{sim}", ...world] };
  const launcher = `mu-plugin-${name}`;
  return { argv: [...argv.slice(0, dashes + 1), `$\{bin:${launcher}}`, ...world], launcher };
}

/** The method of the last request mu sent in this invocation, if any. */
function lastRequest(inv: Invocation): string | undefined {
  let last: { t: number; method: string } | undefined;
  for (const s of inv.sessions)
    for (const e of s.events)
      if (e.ev === "out" && e.msg?.id !== undefined && typeof e.msg.method === "string")
        if (!last || e.t > last.t) last = { t: e.t, method: e.msg.method };
  return last?.method;
}

function methodCounts(invs: Invocation[]): Record<string, number> {
  const c: Record<string, number> = {};
  for (const inv of invs)
    for (const s of inv.sessions) {
      // What mu wrote after the plugin ended by itself never reached it.
      const end = ownEndAt(s) ?? Number.POSITIVE_INFINITY;
      for (const e of s.events) {
        const m = e.ev === "out" && e.t <= end ? e.msg?.method : undefined;
        if (typeof m === "string") c[m] = (c[m] ?? 0) + 1;
      }
    }
  return c;
}

export function toScenario(traces: Invocation[], opts: FromTrace): Scenario {
  const invs = [...traces].sort((a, b) => a.at - b.at);
  // What every invocation had alike goes to the scenario; the rest to its step.
  const shared: Record<string, string> = { ...invs[0]?.env };
  for (const inv of invs)
    for (const [k, v] of Object.entries(shared)) if (inv.env[k] !== v) delete shared[k];
  const steps: Step[] = [];
  const installed = new Set<string>();
  for (const inv of invs) {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(inv.env)) if (shared[k] !== v) env[k] = v;
    const { argv, launcher } = replayed(inv.argv);
    if (launcher && !installed.has(launcher)) {
      installed.add(launcher);
      steps.push({ install: { as: launcher } });
    }
    const step: Step = { mu: argv };
    if (Object.keys(env).length > 0) step.env = env;
    if (inv.end && "exit" in inv.end) {
      if (inv.end.exit !== 0) step.exit = inv.end.exit;
    } else if (inv.end && "signal" in inv.end) {
      const sig = inv.end.signal as Signal;
      step.signalled = sig;
      // The signal came while mu waited on its last request: send it there again.
      const asked = lastRequest(inv);
      if (asked) step.signal = { send: sig, afterSeen: asked };
    } else {
      // A crash point, or a SIGKILL from outside: either way mu left no end.
      step.signalled = "SIGKILL";
    }
    steps.push(step);
  }
  const last = invs.at(-1);
  const expect: Extract<Step, { expect: unknown }>["expect"] = {
    transcript: { in: methodCounts(invs) },
  };
  if (last?.state) {
    expect.intents = last.state.intents.length;
    if (Object.keys(last.state.hosts).length > 0) expect.hosts = last.state.hosts;
  }
  steps.push({ expect });
  const content = invs.some((i) => i.content);
  const sessions = invs.flatMap((i) => i.sessions);
  return {
    scenario: opts.id,
    about:
      `Field trace${opts.when ? ` of ${opts.when}` : ""}: ${invs.length} mu invocation(s) and ` +
      `${sessions.length} plugin process(es), replayed as recorded; the exit codes are the ones ` +
      "mu gave then. TODO: say what went wrong, name the rule it breaks in `proves`, and set " +
      "the exit code (or expect) that should have been, so this fails until it is fixed.",
    proves: [`field.${opts.id.split("/").at(-1)}`],
    ...(Object.keys(shared).length > 0 ? { env: shared } : {}),
    world: { replay: { ...(content ? { content } : {}), sessions } },
    steps,
  };
}
