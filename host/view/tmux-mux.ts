import { spawnSync } from "node:child_process";
import type { Ports } from "../ports/types.js";
import { shQuote as q } from "../sh-quote.js";
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
  if (r.error) return { ok: false, out: "", err: r.error.message };
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
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
      return { id, pid: Number(pid) };
    },
    async alive(id: string): Promise<boolean> {
      const r = tmux(ports, ["display-message", "-p", "-t", id, "#{pane_dead}"]);
      return r.ok && r.out === "0";
    },
    async panesOf(workstream: string, agent: string): Promise<string[]> {
      const r = tmux(ports, [
        "list-panes",
        "-s",
        "-t",
        `=${sessionName(workstream)}`,
        "-F",
        "#{window_name} #{pane_id}",
      ]);
      if (!r.ok) return [];
      return r.out
        .split("\n")
        .map((l) => l.split(" "))
        .filter(([w, id]) => w === agent && id)
        .map(([, id]) => id as string);
    },
    async kill(id: string): Promise<void> {
      tmux(ports, ["kill-pane", "-t", id]);
    },
  };
}
