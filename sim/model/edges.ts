import { basename } from "node:path";
import { MAX_LINE_BYTES } from "../../host/plugin/framing.js";
import type { ModelState } from "./state.js";
import type { Allowed } from "./verbs.js";

// Rules at the edges of the verbs (the explorer's probes, sim/virtual/edge-probes.ts
// draws them), each from the spec and docs/decisions.md:
// - trust: a plugin's executable must be named mu-plugin-<its name> (refused, 4);
// - a spawn asking for --command may be refused up front (2) by a kind that
//   does not honour it, and otherwise succeeds as any spawn;
// - a spawn whose view dies within its readiness window fails;
// - a wait prints one line per agent it names;
// - after a wait reported a restart, the next watch of that agent counts the
//   new incarnation's turns from none, unless a delivery moved the count;
// - retention moves only receipts of ended jobs a week old: a pass that
//   follows one that already had every such receipt to move, with no job
//   ended between them, moves nothing.

/** What `${sim}` stands for in a step: the simulated plugin's executable. */
const SIM_EXE = "mu-plugin-sim";
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Exit codes of a spawn that fails once its job started (docs/cli.md). */
const SPAWN_FAILED = [1, 5];

/**
 * A message this close to the transport's line limit may not fit once the
 * rest of its request is around it: it is refused before anything is
 * written, as a usage error (exit 2): the message must be made smaller.
 */
const nearLimit = (text: string) => Buffer.byteLength(text) >= MAX_LINE_BYTES - 1_024;
const OVERSIZE = 2;

/** The file name a step's path stands for once the runner expands it; undefined when unknown. */
function executable(path: string): string | undefined {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner expands these, not JavaScript
  if (path === "${sim}") return SIM_EXE;
  const bin = /^\$\{bin:([^}]+)\}$/.exec(path);
  if (bin) return bin[1];
  return path.includes("${") ? undefined : basename(path);
}

/** A spawn whose view the backend reports and then kills a moment later. */
export function dyingView(words: string[], env: Record<string, string | undefined>): boolean {
  return words[0] === "agent" && words[1] === "spawn" && env.MU_MUX_SIM === "dies";
}

/** A spawn the model would otherwise hold must succeed in calm. */
function spawnsInCalm(m: ModelState, words: string[], calm: boolean): boolean {
  const a = m.agent(words[2] ?? "");
  const h = m.host(words[words.indexOf("--host") + 1] ?? "");
  return (
    calm && a.state === "absent" && h.state === "ready" && m.plugin(h.plugin ?? "") === "present"
  );
}

export function edgeExits(
  m: ModelState,
  words: string[],
  env: Record<string, string | undefined>,
  calm: boolean,
): Allowed {
  const [group, verb, name = ""] = words;
  if (group === "plugin" && verb === "add") {
    const at = words.indexOf("--");
    const path = at >= 0 ? words[at + 1] : undefined;
    const exe = path === undefined ? undefined : executable(path);
    if (exe === undefined || !NAME.test(name)) return undefined;
    return exe === `mu-plugin-${name}` ? undefined : [4];
  }
  if (group === "agent" && verb === "send" && nearLimit(words[3] ?? "")) {
    const a = m.agent(name);
    if (a.state === "absent") return [3];
    return calm && a.state === "live" ? [0, OVERSIZE] : undefined;
  }
  if (group !== "agent" || verb !== "spawn" || !spawnsInCalm(m, words, calm)) return undefined;
  if (dyingView(words, env)) return SPAWN_FAILED;
  if (words.includes("--command")) return [0, 2];
  return undefined;
}

/** A wait names each agent on one line of its own. */
export function waitLinesDiverge(words: string[], stdout: string): string | undefined {
  if (words[0] !== "wait" || words.includes("--json")) return undefined;
  const lines = new Map<string, number>();
  for (const line of stdout.split("\n")) {
    const label = /^(\S+\/\S+) /.exec(line)?.[1];
    if (label) lines.set(label, (lines.get(label) ?? 0) + 1);
  }
  for (const [label, n] of lines)
    if (n > 1) return `printed ${n} lines for ${label}; a wait reports each agent once`;
  return undefined;
}

/** Calls that move what a later watch counts from: a delivery, or a new job. */
const MOVES_COUNT = [
  "job.start",
  "channel.send",
  "channel.fresh",
  "channel.command",
  "channel.interrupt",
  "channel.abort",
  "channel.answer",
];

interface Call {
  method?: string;
  params?: { target?: { agent?: { name?: string } }; afterRuns?: number; inc?: number };
}

/**
 * After `<ws>/<name> restarted (incarnation N)`, the first watch of that
 * agent in incarnation N, with nothing delivered to it since the watch
 * before, asks from 0 runs.
 */
export function restartCountDiverges(stdouts: string[], sent: string): string | undefined {
  const restarts = stdouts.flatMap((out) =>
    [...out.matchAll(/^\S+\/(\S+) restarted \(incarnation (\d+)\)$/gm)].map((x) => ({
      name: x[1] ?? "",
      inc: Number(x[2]),
    })),
  );
  if (restarts.length === 0) return undefined;
  const calls: Call[] = sent.split("\n").flatMap((l) => {
    try {
      return [JSON.parse(l) as Call];
    } catch {
      return [];
    }
  });
  for (const { name, inc } of restarts) {
    let moved = false;
    for (const c of calls) {
      if (c.params?.target?.agent?.name !== name) continue;
      if (MOVES_COUNT.includes(c.method ?? "")) moved = true;
      if (c.method !== "channel.watch") continue;
      if (c.params.inc === inc) {
        const after = c.params.afterRuns ?? 0;
        if (!moved && after !== 0)
          return `the first watch of ${name} after its channel restarted into incarnation ${inc} counts from ${after} runs, not from none`;
        break;
      }
      moved = false;
    }
  }
  return undefined;
}

const WEEK_MS = 7 * 86_400_000;
/** Retention runs at most once an hour, inside a commit. */
const HOUR_MS = 3_600_000;

/** What `mu state` says retention moved, between passes that had nothing new to move. */
export class ArchiveWatch {
  /** The last time a job may have ended or an intent been settled. */
  private lastEnd = 0;
  private committedAt: number | undefined;
  private reading: number | undefined;

  /** Judges one mu step; call before the model learns from it. */
  step(
    m: ModelState,
    words: string[],
    exit: number | null,
    stdout: string,
    now: number,
    calm: boolean,
    owes: boolean,
  ): string | undefined {
    const [group, verb = ""] = words;
    const name = words[2] ?? "";
    // A spawn of a new name, a send or a read that settles nothing: no job ends.
    const harmless =
      calm &&
      exit === 0 &&
      ((group === "task" && verb === "add") ||
        group === "state" ||
        (group === "agent" &&
          !owes &&
          (verb === "list" ||
            (verb === "spawn" && m.agent(name).state === "absent") ||
            ((verb === "send" || verb === "read") && m.agent(name).state === "live"))));
    if (!harmless) {
      this.lastEnd = now;
      this.reading = undefined;
      this.committedAt = undefined;
      return undefined;
    }
    if (group === "task") this.committedAt = now;
    if (group !== "state" || words.includes("--json")) return undefined;
    const n = Number(/^archived: (\d+) /m.exec(stdout)?.[1] ?? 0);
    if (this.reading !== undefined && n !== this.reading)
      return `archived ${n - this.reading} receipts more, though no job ended since a pass that could already move every receipt of an ended job`;
    // A pass ran just now, a week and an hour after the last job could end.
    if (this.committedAt === now && now >= this.lastEnd + WEEK_MS + HOUR_MS) this.reading = n;
    return undefined;
  }
}
