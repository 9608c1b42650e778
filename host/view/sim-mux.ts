import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Ports } from "../ports/types.js";
import { dbPath } from "../store/paths.js";
import { type Mux, type Pane, PaneError, type ViewCommand } from "./backend.js";

// The testbed's mux backend. A pane is a real process running the view
// command under /bin/sh with stdin from /dev/null, in a session of its own so
// it outlives the mu that opened it, as a tmux pane does. Each pane is a file
// under <state>/sim-mux/ naming its pid and start time. `MU_MUX_SIM` scripts
// the backend's failures:
//   fail-start       the pane cannot be opened at all
//   dies             the pane is reported, then its process dies DIES_AFTER_MS later
//   no-command-line  the backend cannot run a command line (as herdr)

/** How long a `dies` pane lives: well inside mu's default readiness window. */
export const DIES_AFTER_MS = 200;

interface PaneFile {
  pid: number;
  start: string | null;
  command: string;
  workstream: string;
  agent: string;
}

export function simMux(ports: Ports): Mux {
  const mode = ports.env.MU_MUX_SIM ?? "";
  const dir = join(dirname(dbPath(ports.env)), "sim-mux");
  const file = (id: string) => join(dir, `${id}.json`);
  const read = (id: string): PaneFile | null => {
    try {
      return JSON.parse(readFileSync(file(id), "utf8")) as PaneFile;
    } catch {
      return null;
    }
  };
  return {
    name: "sim",
    runsCommandLines: mode !== "no-command-line",
    async open(workstream: string, agent: string, view: ViewCommand): Promise<Pane> {
      if (mode === "fail-start") throw new PaneError("the sim mux was told to fail this pane");
      await ports.fs.mkdirp(dir, 0o700);
      const child = spawn("/bin/sh", ["-c", view.command], {
        env: { ...(ports.env as Record<string, string>), ...view.env },
        ...(view.cwd ? { cwd: view.cwd } : {}),
        detached: true,
        stdio: "ignore",
      });
      const pid = await new Promise<number>((ok, fail) => {
        child.once("spawn", () => ok(child.pid as number));
        child.once("error", (err) => fail(new PaneError(err.message)));
      });
      child.unref();
      const id = `sim-${randomBytes(4).toString("hex")}`;
      const rec: PaneFile = {
        pid,
        start: ports.liveness.startOf(pid),
        command: view.command,
        workstream,
        agent,
      };
      const fh = await ports.fs.open(file(id));
      await fh.write(Buffer.from(JSON.stringify(rec)));
      await fh.sync();
      await fh.close();
      if (mode === "dies") {
        // Dies a moment after it was reported, as a view command that exits
        // at once does: after the backend's own look, inside mu's window.
        spawn("/bin/sh", ["-c", `sleep ${DIES_AFTER_MS / 1000}; kill -9 -${pid} 2>/dev/null`], {
          detached: true,
          stdio: "ignore",
        }).unref();
      }
      return { id, pid };
    },
    async alive(id: string): Promise<boolean> {
      const p = read(id);
      if (!p || p.start === null) return false;
      return ports.liveness.alive({ pid: p.pid, start: p.start });
    },
    async panesOf(workstream: string, agent: string): Promise<string[]> {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      return names
        .filter((n) => n.endsWith(".json"))
        .map((n) => n.slice(0, -".json".length))
        .filter((id) => {
          const p = read(id);
          return p?.workstream === workstream && p.agent === agent;
        });
    },
    async kill(id: string): Promise<void> {
      // As tmux's backend does, which cannot parse it: a kill of no pane is
      // a mistake to show, not a no-op that would hide it.
      if (typeof id !== "string") throw new TypeError(`the sim mux was asked to kill ${id}`);
      const p = read(id);
      if (p && p.start !== null && ports.liveness.alive({ pid: p.pid, start: p.start })) {
        try {
          process.kill(-p.pid, "SIGKILL");
        } catch {
          // gone between the look and the kill
        }
      }
      rmSync(file(id), { force: true });
    },
  };
}
