import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Ports } from "../ports/types.js";
import { shQuote as q } from "../sh-quote.js";
import { dbPath } from "../store/paths.js";
import { type Mux, type Pane, PaneError, type ViewCommand } from "./backend.js";

// The tmux backend: one session per workstream (`mu-<workstream>`), one
// window per agent. `MU_TMUX_SOCKET` names a private server socket (-L), as
// the tests use, so they never touch the user's own tmux.

/**
 * The workstream's session name. tmux rewrites '.' (and ':', which no
 * workstream name holds) in a session name to '_', which would lose the
 * session mu made and merge `x.y` with `x_y`; so '.' becomes ',', which no
 * workstream name holds either. Window names are kept as given.
 */
export function sessionName(workstream: string): string {
  return `mu-${workstream.replaceAll(".", ",")}`;
}

function tmux(ports: Ports, args: string[]): { ok: boolean; out: string; err: string } {
  const socket = ports.env.MU_TMUX_SOCKET;
  const r = spawnSync("tmux", [...(socket ? ["-L", socket] : []), ...args], {
    encoding: "utf8",
    env: ports.env as NodeJS.ProcessEnv,
  });
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === "ENOENT";
    return {
      ok: false,
      out: "",
      err: missing ? "tmux is not on PATH (install tmux)" : r.error.message,
    };
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

// What mu records for a pane is its tmux id and its process's pid, `%3@4242`:
// tmux numbers panes afresh once its server restarts (which it does when
// every pane has gone, as when a dropped link ends every view), so by then
// `%3` alone may be another agent's pane, and a close would kill it. Each
// pane also carries the database it was opened for (a pane option), so the
// sweep for unrecorded panes never takes another database's agent of the
// same name on a shared server. An id recorded bare, by an older mu, is
// taken as it is, and a pane with no tag (an older mu's, or a tmux before 3.0
// that has no pane options) is swept as before.
const DB_OPTION = "@mu-db";

// A listed pane, its fields apart by spaces: tmux writes a tab as "_" where
// the locale is C or POSIX (as under env -i, cron or a service manager), so
// a tab could not part them. The tag is hex or empty; the window's name,
// last, is the agent's.
const PANE_LINE = /^(%\d+) (\d+) ([0-9a-f]*) (.*)$/;

/** The database as a tag: a hash of its real path, so every spelling of it agrees. */
function dbTag(ports: Ports): string {
  const path = dbPath(ports.env);
  let real: string;
  try {
    real = join(realpathSync(dirname(path)), basename(path));
  } catch {
    real = resolve(ports.cwd, path);
  }
  return createHash("sha256").update(real).digest("hex").slice(0, 16);
}

function recorded(rec: string): { id: string; pid: number | undefined } {
  const at = rec.indexOf("@");
  return at < 0
    ? { id: rec, pid: undefined }
    : { id: rec.slice(0, at), pid: Number(rec.slice(at + 1)) };
}

/** The recorded pane as tmux has it now, or undefined once it is gone or another pane has its id. */
function lookUp(ports: Ports, rec: string): { id: string; dead: boolean } | undefined {
  const { id, pid } = recorded(rec);
  const r = tmux(ports, ["display-message", "-p", "-t", id, "#{pane_id} #{pane_pid} #{pane_dead}"]);
  const [found, foundPid, dead] = r.out.split(" ");
  if (!r.ok || found !== id) return undefined;
  if (pid !== undefined && Number(foundPid) !== pid) return undefined;
  return { id, dead: dead !== "0" };
}

export function tmuxMux(ports: Ports): Mux {
  return {
    name: "tmux",
    runsCommandLines: true,
    async open(workstream: string, agent: string, view: ViewCommand): Promise<Pane> {
      const session = sessionName(workstream);
      const has = tmux(ports, ["has-session", "-t", `=${session}`]).ok;
      const env = Object.entries(view.env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
      const where = view.cwd ? ["-c", view.cwd] : [];
      // stdin from /dev/null: a view only shows the job, it never feeds it.
      const cmd = `exec 0</dev/null; ${view.command}`;
      const fmt = ["-P", "-F", "#{pane_id} #{pane_pid}"];
      const r = has
        ? tmux(ports, [
            "new-window",
            "-d",
            "-t",
            `=${session}:`,
            "-n",
            agent,
            ...fmt,
            ...env,
            ...where,
            `sh -c ${q(cmd)}`,
          ])
        : tmux(ports, [
            "new-session",
            "-d",
            "-s",
            session,
            "-n",
            agent,
            ...fmt,
            ...env,
            ...where,
            `sh -c ${q(cmd)}`,
          ]);
      const [id, pid] = r.out.split(" ");
      if (!r.ok || !id || !pid) throw new PaneError(r.err || "tmux did not report the pane");
      tmux(ports, ["set-option", "-p", "-t", id, DB_OPTION, dbTag(ports)]);
      return { id: `${id}@${pid}`, pid: Number(pid) };
    },
    async alive(rec: string): Promise<boolean> {
      const pane = lookUp(ports, rec);
      return pane !== undefined && !pane.dead;
    },
    async panesOf(workstream: string, agent: string): Promise<string[]> {
      const r = tmux(ports, [
        "list-panes",
        "-s",
        "-t",
        `=${sessionName(workstream)}`,
        "-F",
        `#{pane_id} #{pane_pid} #{${DB_OPTION}} #{window_name}`,
      ]);
      if (!r.ok) return [];
      const db = dbTag(ports);
      const mine: string[] = [];
      for (const line of r.out.split("\n")) {
        const m = PANE_LINE.exec(line);
        if (!m) continue;
        const [, id, pid, tag, name] = m;
        if ((tag === db || tag === "") && name === agent) mine.push(`${id}@${pid}`);
      }
      return mine;
    },
    async kill(rec: string): Promise<void> {
      const pane = lookUp(ports, rec);
      if (pane) tmux(ports, ["kill-pane", "-t", pane.id]);
    },
  };
}
