import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import type { SshWorld } from "./ssh-setup.js";

// Where one verb's time goes, from two clocks that agree (epoch ms on one
// machine): mu's trace (MU_TRACE_DIR: each line to and from the plugin,
// the plugin's spawn and exit) and the plugin's own milestones
// (MU_SSH_TIMING, plugins/ssh/timing.ts: its start, the ssh master, each
// session over it). Each row is the time since the row before.

interface Ev {
  at: number;
  what: string;
}

function traceEvents(dir: string): Ev[] {
  const file = readdirSync(dir).find((f) => f.endsWith(".ndjson"));
  if (!file) return [];
  const recs = readFileSync(join(dir, file), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const begin = recs.find((r) => r.ev === "mu");
  const at0 = Number(begin?.at ?? 0);
  const out: Ev[] = [{ at: at0, what: "mu: trace begins (bin, bundle and verb loaded)" }];
  for (const r of recs) {
    const at = at0 + Number(r.t);
    const msg = (r.msg ?? r.line ?? {}) as { method?: string; id?: number };
    if (r.ev === "spawn") out.push({ at, what: "mu: plugin spawned" });
    else if (r.ev === "out") out.push({ at, what: `mu: sent ${msg.method ?? "a line"}` });
    else if (r.ev === "in")
      out.push({
        at,
        what: `mu: got ${msg.method ?? (msg.id !== undefined ? `reply ${msg.id}` : "a line")}`,
      });
    else if (r.ev === "stdin-closed") out.push({ at, what: "mu: closed the plugin's stdin" });
    else if (r.ev === "exit") out.push({ at, what: "mu: plugin exited" });
    else if (r.ev === "end") out.push({ at, what: "mu: verb ends" });
  }
  return out;
}

function pluginEvents(file: string): Ev[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [at, , ...what] = l.split(" ");
      return { at: Number(at), what: `plugin: ${what.join(" ")}` };
    });
}

/** One run of `mu args` with both clocks on; the rows of its timeline. */
export function breakdown(w: SshWorld, args: string[], scratch: string): string {
  const dir = mkdtempSync(join(scratch, "trace-"));
  const timing = join(dir, "plugin-timing");
  const mu = join(packageRoot(), "dist/host/cli/mu.cjs");
  const t0 = performance.timeOrigin + performance.now();
  const r = spawnSync(process.execPath, [mu, ...args], {
    cwd: w.checkout,
    env: { ...w.env, MU_TRACE_DIR: join(dir, "t"), MU_TRACE_CONTENT: "1", MU_SSH_TIMING: timing },
    encoding: "utf8",
  });
  const t1 = performance.timeOrigin + performance.now();
  const evs = [
    { at: t0, what: "bench: spawns mu" },
    ...traceEvents(join(dir, "t")),
    ...pluginEvents(timing),
    { at: t1, what: `bench: mu exited ${r.status}` },
  ].sort((a, b) => a.at - b.at);
  rmSync(dir, { recursive: true, force: true });
  let prev = t0;
  const rows = evs.map((e) => {
    const row = `| ${(e.at - t0).toFixed(0)} | +${(e.at - prev).toFixed(0)} | ${e.what} |`;
    prev = e.at;
    return row;
  });
  return [
    `\`mu ${args.join(" ")}\`, one run:`,
    "",
    "| ms since spawn | since the row before | event |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}
