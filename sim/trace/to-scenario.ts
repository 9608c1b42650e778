import { basename, isAbsolute } from "node:path";
import type { Scenario, Signal, Step } from "../runner/scenario.js";
import { type Invocation, ownEndAt, type TraceRecord } from "./read.js";

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
  const world = ["--world", place("world")];
  if (name === "sim") return { argv: [...argv.slice(0, dashes + 1), place("sim"), ...world] };
  const launcher = `mu-plugin-${name}`;
  return { argv: [...argv.slice(0, dashes + 1), `$\{bin:${launcher}}`, ...world], launcher };
}

/** The runner's own placeholders (sandbox.ts expands them), not template strings. */
const place = (name: string) => `\${${name}}`;

/**
 * A word that names a file of the recording machine, as the runner's
 * placeholder for its counterpart in the scenario's sandbox: the sim, an
 * installed launcher, the world, or a file of the same name in the
 * sandbox's root. A generated file then holds no path of the machine the
 * trace came from.
 */
function portable(word: string, prev: string | undefined): string {
  if (prev === "--world") return place("world");
  if (!isAbsolute(word)) return word;
  const name = basename(word);
  if (name === "mu-plugin-sim") return place("sim");
  if (name.startsWith("mu-plugin-")) return place(`bin:${name}`);
  return `${place("root")}/${name}`;
}

const portableArgv = (argv: readonly string[]) =>
  argv.map((w, i) => portable(w, i > 0 ? argv[i - 1] : undefined));

/**
 * `host exec --file PATH` (or `-`, stdin): the file is not on the machine
 * that runs the scenario, so a step before it writes one into the sandbox.
 * Its text is the recorded script when the trace kept content, else a
 * stand-in: the replayed plugin answers link.exec as recorded either way.
 */
function scriptFile(inv: Invocation, n: number): { argv: string[]; write?: Step } {
  const argv = [...inv.argv];
  if (argv[0] !== "host" || argv[1] !== "exec") return { argv };
  const dashes = argv.indexOf("--");
  const at = argv.findIndex(
    (w, i) => (dashes === -1 || i < dashes) && (w === "--file" || w.startsWith("--file=")),
  );
  if (at === -1) return { argv };
  const path = `${place("root")}/exec-${n}.sh`;
  if (argv[at] === "--file") argv[at + 1] = path;
  else argv[at] = `--file=${path}`;
  const sent = inv.sessions
    .flatMap((s) => s.events)
    .find((e) => e.ev === "out" && e.msg?.method === "link.exec");
  const script = (sent?.msg?.params as { script?: unknown } | undefined)?.script;
  const text =
    inv.content && typeof script === "string"
      ? script
      : `# stands in for the recorded script${typeof script === "string" ? ` ${script}` : ""}\n`;
  // base64, so no word of the script reads as one of the runner's placeholders.
  const b64 = Buffer.from(text, "utf8").toString("base64");
  return { argv, write: { sh: `printf '%s' '${b64}' | base64 -d > "${path}"` } };
}

/** Every string in v with each key of `map` replaced by its value. */
function replaceIn(v: unknown, map: ReadonlyMap<string, string>): unknown {
  if (typeof v === "string") {
    let out = v;
    for (const [a, b] of map) out = out.replaceAll(a, b);
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => replaceIn(x, map));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceIn(x, map)]));
  return v;
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
    const file = scriptFile(inv, steps.length + 1);
    if (file.write) steps.push(file.write);
    const { argv, launcher } = replayed(file.argv);
    if (launcher && !installed.has(launcher)) {
      installed.add(launcher);
      steps.push({ install: { as: launcher } });
    }
    const step: Step = { mu: portableArgv(argv) };
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
  // The recording's world, wherever a message names a file in it (a view's
  // pid file, say), becomes the replaying world's: the sim expands it.
  const worlds = new Map<string, string>();
  for (const argv of [
    ...invs.map((i) => i.argv),
    ...invs.flatMap((i) => i.sessions.map((s) => s.argv)),
  ])
    argv.forEach((w, i) => {
      if (argv[i - 1] === "--world" && isAbsolute(w)) worlds.set(w, place("world"));
    });
  const sessions = invs
    .flatMap((i) => i.sessions)
    .map((s) => ({
      ...s,
      argv: portableArgv(s.argv),
      events: s.events.map((e) => replaceIn(e, worlds) as TraceRecord),
    }));
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
