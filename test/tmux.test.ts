import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { muProcess, tempState } from "./helpers.js";

// The tmux backend for real: a spawn on a plugin host opens a window in the
// workstream's session on a private tmux server, running the job's view
// with stdin from /dev/null; close kills it. .ci/run installs tmux.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");

describe("the tmux mux backend", () => {
  let st: ReturnType<typeof tempState>;
  let socket: string;
  const tmux = (...args: string[]) =>
    spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  beforeEach(() => {
    st = tempState();
    socket = `mu-test-${process.pid}-${Date.now()}`;
  });
  afterEach(() => {
    tmux("kill-server");
    st.done();
  });

  /** A mu's environment with its views in tmux: on the private server unless `server` names another. */
  const viewEnv = (
    stateEnv: Record<string, string> = st.env,
    server: Record<string, string> = { MU_TMUX_SOCKET: socket },
  ) => ({ ...stateEnv, MU_MUX: "tmux", ...server });

  /** mu in `env`, the sim registered and host box added. */
  const boxed = (env: Record<string, string> = viewEnv()) => {
    const world = join(st.dir, "world");
    if (!existsSync(world)) World.create(world, { preset: "link-job", instance: "sim-1" });
    const mu = (...args: string[]) => muProcess(args, env);
    expect(mu("plugin", "add", "sim", "--", sim, "--world", world).code).toBe(0);
    expect(mu("host", "add", "box", "--plugin", "sim").code).toBe(0);
    return mu;
  };

  it("spawns an agent's view in a tmux window and closes it", () => {
    const found = spawnSync("tmux", ["-V"], { encoding: "utf8" });
    expect(found.error, "tmux is not installed: apt-get install tmux").toBeUndefined();
    const mu = boxed();
    const spawned = mu("agent", "spawn", "a", "--host", "box", "-w", "crew");
    expect(spawned.stderr).toBe("");
    expect(spawned.stdout).toMatch(
      /^spawned crew\/a on box \(job job-[0-9a-f]+, view %\d+@\d+\)\n$/,
    );
    const view = /view (%\d+@\d+)/.exec(spawned.stdout)?.[1] ?? "";
    const pane = view.split("@")[0];
    const panes = tmux(
      "list-panes",
      "-a",
      "-F",
      "#{session_name} #{window_name} #{pane_id} #{pane_dead}",
    );
    expect(panes.stdout).toContain(`mu-crew a ${pane} 0`);
    // The view's stdin is /dev/null, as the spec asks of every view.
    const pid = tmux("display-message", "-p", "-t", pane ?? "", "#{pane_pid}").stdout.trim();
    const stdin = spawnSync("readlink", [`/proc/${pid}/fd/0`], { encoding: "utf8" }).stdout.trim();
    expect(stdin).toBe("/dev/null");
    expect(mu("agent", "list").stdout).toMatch(new RegExp(`^crew/a\\tbox\\trunning\\t${view}\\n$`));
    expect(mu("agent", "close", "a", "-w", "crew").stdout).toBe("closed crew/a\n");
    expect(tmux("list-panes", "-a", "-F", "#{pane_id}").stdout).not.toContain(pane);
  });

  // tmux turns '.' in a session name into '_', so a workstream named with a
  // dot must be named in a form tmux keeps, or its second agent would find no
  // session and make a duplicate one.
  it("keeps a workstream with a dot in one session, one window per agent", () => {
    const mu = boxed();
    for (const name of ["a.1", "b"]) {
      const spawned = mu("agent", "spawn", name, "--host", "box", "-w", "v1.2");
      expect(spawned.stderr).toBe("");
      expect(spawned.code).toBe(0);
    }
    const panes = tmux("list-panes", "-a", "-F", "#{session_name} #{window_name} #{pane_dead}");
    expect(panes.stdout.trim().split("\n").sort()).toEqual(["mu-v1,2 a.1 0", "mu-v1,2 b 0"]);
    for (const name of ["a.1", "b"])
      expect(mu("agent", "close", name, "-w", "v1.2").stdout).toBe(`closed v1.2/${name}\n`);
    expect(tmux("list-panes", "-a", "-F", "#{pane_id}").stdout).toBe("");
  });

  // tmux numbers panes from %0 again once its server restarts (every view
  // gone, as when a dropped link ends them all): a pane recorded by its id
  // alone would then name the next agent's view, and closing the old agent
  // killed the new one's (found trying mu over ssh).
  it("never takes a new pane that reuses an old pane's id for the old agent's view", () => {
    const mu = boxed();
    const viewOf = (out: string) => /view (%\d+)@\d+/.exec(out)?.[1];
    const a = mu("agent", "spawn", "a", "--host", "box");
    expect(a.code).toBe(0);
    tmux("kill-server");
    const b = mu("agent", "spawn", "b", "--host", "box");
    expect(b.code).toBe(0);
    expect(viewOf(b.stdout)).toBe(viewOf(a.stdout));
    expect(mu("agent", "list").stdout).toMatch(
      /^main\/a\tbox\trunning\t%\d+@\d+ \(gone: mu agent reattach main\/a\)\n/,
    );
    expect(mu("agent", "close", "a").code).toBe(0);
    const panes = tmux("list-panes", "-a", "-F", "#{window_name} #{pane_dead}").stdout;
    expect(panes.trim()).toBe("b 0");
    expect(mu("agent", "list").stdout).toMatch(/^main\/b\tbox\trunning\t%\d+@\d+\n$/);
  });

  // A spawn that died between opening its view and recording it leaves a
  // pane no record names; the next spawn of the agent closes it, and any
  // pane of that name an older mu left untagged, but no other agent's.
  it("closes the panes a crashed spawn of the agent left, and no other agent's", () => {
    const mu = boxed();
    const crashed = muProcess(["agent", "spawn", "a", "--host", "box"], {
      ...viewEnv(),
      MU_CRASH_AT: "view.pane-opened",
    });
    expect(crashed.signal).toBe("SIGKILL");
    const orphan = tmux("list-panes", "-a", "-F", "#{pane_id}").stdout.trim();
    expect(orphan).toMatch(/^%\d+$/);
    expect(tmux("new-window", "-d", "-t", "=mu-main:", "-n", "a", "sleep 300").status).toBe(0);
    expect(tmux("new-window", "-d", "-t", "=mu-main:", "-n", "b", "sleep 300").status).toBe(0);
    const again = mu("agent", "spawn", "a", "--host", "box");
    expect(again.stderr).toBe("");
    const view = /view (%\d+)@\d+/.exec(again.stdout)?.[1];
    const panes = tmux("list-panes", "-a", "-F", "#{window_name} #{pane_id}").stdout;
    expect(panes.trim().split("\n").sort()).toEqual([
      `a ${view}`,
      expect.stringMatching(/^b %\d+$/),
    ]);
    expect(panes).not.toContain(`${orphan}\n`);
  });

  it("uses tmux's default server when no socket is named", () => {
    const tmpdir = mkdtempSync(join(st.dir, "tmux-"));
    const mu = boxed(viewEnv(st.env, { TMUX_TMPDIR: tmpdir }));
    const own = (...args: string[]) =>
      spawnSync("tmux", args, {
        encoding: "utf8",
        env: { PATH: process.env.PATH, TMUX_TMPDIR: tmpdir },
      });
    try {
      expect(mu("agent", "spawn", "a", "--host", "box").stderr).toBe("");
      expect(own("list-panes", "-a", "-F", "#{session_name} #{window_name}").stdout).toBe(
        "mu-main a\n",
      );
      expect(mu("agent", "close", "a").stdout).toBe("closed main/a\n");
    } finally {
      own("kill-server");
    }
  });

  it("says tmux is missing in one line, and leaves no job behind", () => {
    const mu = boxed();
    // node alone on PATH: the sim plugin still starts, tmux cannot.
    const bin = mkdtempSync(join(st.dir, "bin-"));
    symlinkSync(process.execPath, join(bin, "node"));
    const r = muProcess(["agent", "spawn", "c", "--host", "box"], { ...viewEnv(), PATH: bin });
    expect([r.code, r.stderr]).toEqual([
      5,
      "mu: agent: main/c did not come up: the tmux backend could not open a view for main/c: tmux is not on PATH (install tmux); the job was stopped; see the plugin's and the backend's state, then spawn again\n",
    ]);
    expect(mu("agent", "list").stdout).toMatch(/^no agents; /);
  });

  // Two databases on one tmux server (the default server, unless
  // MU_TMUX_SOCKET is set): a spawn sweeps the agent's unrecorded panes, and
  // took the other database's agent of the same name with them.
  it("leaves another database's agent of the same name alone", () => {
    const other = tempState();
    try {
      const mus = [boxed(), boxed(viewEnv(other.env))];
      for (const mu of mus) expect(mu("agent", "spawn", "a", "--host", "box").code).toBe(0);
      const panes = tmux("list-panes", "-a", "-F", "#{window_name} #{pane_dead}").stdout;
      expect(panes.trim().split("\n")).toEqual(["a 0", "a 0"]);
      for (const mu of mus) expect(mu("agent", "list").stdout).not.toContain("(gone");
    } finally {
      other.done();
    }
  });
});
