import type { World } from "../plugin/world.js";
import { messageCounts } from "./counts.js";
import type { Ran } from "./ran.js";
import type { ExpectStep } from "./scenario.js";
import { checkTrace } from "./trace-expect.js";

// An expect step's checks on what the world and mu's journal hold, the same
// on both engines: each engine says how to read its world, its intents and
// how to run one more mu. The checks on real files (db, leftoverFiles) stay
// with the real engine, which alone has them.

export interface Observed {
  world: Pick<World, "transcript" | "state">;
  intents(): Promise<{ method: string; subject: string }[]>;
  mu(args: string[]): Promise<Ran>;
  /** The files retention may leave beside the DB (`<db>.archive-*`), each engine from its own disk; a directory's bytes are null. */
  archive(): { name: string; bytes: Uint8Array | null }[];
  /** The DB file's bytes as mu left them, null when there is none. */
  db(): Uint8Array | null;
  /** The lines of the traces the steps so far wrote. */
  traces(): readonly string[];
}

/** The DB's archive files' prefix: the segments and their temps. */
export function isArchiveFile(dbName: string, file: string): boolean {
  return file.startsWith(`${dbName}.archive-`);
}

/** The highest-numbered segment among a directory's names (temps left out), for a damage step. */
export function newestSegment(dbName: string, names: string[]): string {
  const segments = names.filter((f) => isArchiveFile(dbName, f) && f.endsWith(".jsonl")).sort();
  const last = segments.at(-1);
  if (last === undefined)
    throw new Error("damage archive: there is no archive segment beside the DB");
  return last;
}

/**
 * What `expect.archive` matches: the archive's files in name order, each as
 * a `file NAME` line followed by its text (a directory in its way as a `dir
 * NAME` line), so one pattern can pin names, numbering and rows.
 */
function archiveText(files: { name: string; bytes: Uint8Array | null }[]): string {
  return [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((f) =>
      f.bytes === null
        ? `dir ${f.name}\n`
        : `file ${f.name}\n${Buffer.from(f.bytes).toString("utf8")}`,
    )
    .join("");
}

export async function checkWorld(o: Observed, want: ExpectStep["expect"]): Promise<string[]> {
  const problems: string[] = [];
  for (const dir of ["in", "out"] as const) {
    const expected = want.transcript?.[dir];
    if (!expected) continue;
    const got = messageCounts(o.world.transcript(), dir);
    for (const [method, n] of Object.entries(expected)) {
      if ((got[method] ?? 0) !== n)
        problems.push(`transcript ${dir} has ${got[method] ?? 0} × ${method}, expected ${n}`);
    }
  }
  if (want.plugins) {
    const r = await o.mu(["plugin", "list", "--json"]);
    const names =
      r.exit === 0 ? (JSON.parse(r.stdout) as { name: string }[]).map((p) => p.name) : null;
    if (JSON.stringify(names) !== JSON.stringify(want.plugins)) {
      problems.push(
        `plugins are ${JSON.stringify(names)}, expected ${JSON.stringify(want.plugins)}`,
      );
    }
  }
  if (want.effects || want.effectsPerKeyAtMost) {
    const applied = o.world.state().effects;
    const byMethod = (m: string) => Object.entries(applied).filter(([k]) => k.startsWith(`${m}:`));
    for (const [m, n] of Object.entries(want.effects ?? {})) {
      const total = byMethod(m).reduce((a, [, v]) => a + v, 0);
      if (total !== n) problems.push(`the world applied ${m} ${total} times, expected ${n}`);
    }
    for (const [m, n] of Object.entries(want.effectsPerKeyAtMost ?? {})) {
      for (const [k, v] of byMethod(m))
        if (v > n) problems.push(`the world applied ${k} ${v} times, at most ${n} allowed`);
    }
  }
  for (const [machine, n] of Object.entries(want.sessionsPeak ?? {})) {
    const peak = o.world.state().sessions?.[machine]?.peak ?? 0;
    if (peak !== n)
      problems.push(`at most ${peak} link calls ran at once on ${machine}, expected ${n}`);
  }
  if (want.cleanExits !== undefined) {
    const n = o.world.state().cleanExits ?? 0;
    if (n !== want.cleanExits)
      problems.push(
        `${n} plugin processes finished winding down and exited by themselves, expected ${want.cleanExits}`,
      );
  }
  for (const method of want.sameParams ?? []) {
    const sent = o.world
      .transcript()
      .filter((e) => e.dir === "in" && e.msg.method === method)
      .map((e) => {
        const { deadline: _d, ...rest } = (e.msg.params ?? {}) as Record<string, unknown>;
        return JSON.stringify(rest);
      });
    if (new Set(sent).size > 1)
      problems.push(`${method} was sent with ${new Set(sent).size} different params`);
    if (sent.length < 2)
      problems.push(
        `${method} was sent ${sent.length} times; sameParams needs a resend to compare`,
      );
  }
  for (const [method, pattern] of Object.entries(want.paramsMatch ?? {})) {
    const sent = o.world
      .transcript()
      .filter((e) => e.dir === "in" && e.msg.method === method)
      .map((e) => JSON.stringify(e.msg.params ?? {}));
    if (sent.length === 0) problems.push(`${method} was never sent; paramsMatch needs one`);
    for (const params of sent)
      if (!new RegExp(pattern).test(params))
        problems.push(`${method}'s params do not match ${pattern}: ${params}`);
  }
  if (want.archive !== undefined) {
    const text = archiveText(o.archive());
    if (!new RegExp(want.archive).test(text))
      problems.push(`the archive beside the DB does not match ${want.archive}:\n${text}`);
  }
  problems.push(...checkTrace(o.traces(), want.trace));
  if (want.dbFreePages !== undefined) {
    // SQLite's header counts the pages a delete freed and nothing reused yet (offset 36).
    const bytes = o.db();
    const free = bytes && bytes.length >= 40 ? Buffer.from(bytes).readUInt32BE(36) : null;
    if (free !== want.dbFreePages)
      problems.push(
        `the DB file has ${free ?? "no header, so no count of"} free pages, expected ${want.dbFreePages}`,
      );
  }
  if (want.intents !== undefined) {
    const left = await o.intents();
    if (left.length !== want.intents) {
      problems.push(
        `${left.length} intents left (${left.map((i) => `${i.method} ${i.subject}`).join(", ")}), expected ${want.intents}`,
      );
    }
  }
  if (want.hosts) {
    const r = await o.mu(["host", "list", "--json"]);
    const states = new Map(
      (JSON.parse(r.stdout || "[]") as { name: string; state: string }[]).map((h) => [
        h.name,
        h.state,
      ]),
    );
    for (const [name, state] of Object.entries(want.hosts)) {
      if ((states.get(name) ?? null) !== state)
        problems.push(`host ${name} is ${states.get(name) ?? "not recorded"}, expected ${state}`);
    }
  }
  return problems;
}
