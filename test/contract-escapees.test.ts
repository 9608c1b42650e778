import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Escapee, members, outside, sweep, type Watch } from "../host/contract/escapees.js";
import { until } from "./helpers.js";
import { alive } from "./sshd.js";

// How `mu plugin check` finds what a plugin started outside its process
// group (containment): by a marker in the environment, and by ancestry from
// the plugin's process, remembered once seen. Real processes stand in for a
// plugin and what it starts; every one is killed at the end, and only those:
// the test never signals a pid it did not read from its own shells.

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0))
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
});

/** Reads `n` whitespace-separated pids the shell prints, and keeps them for the clean-up. */
function pids(child: ChildProcess, n: number): Promise<number[]> {
  return new Promise((done, failed) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const got = out.trim().split(/\s+/).filter(Boolean).map(Number);
      if (out.endsWith("\n") && got.length >= n) {
        started.push(...got);
        done(got);
      }
    });
    child.on("close", () => failed(new Error(`exited first, having printed '${out}'`)));
  });
}

/** A shell in a group of its own (the plugin), which runs `script` and then stays. */
function leader(script: string, env: Record<string, string> = {}) {
  const child = spawn("sh", ["-c", `${script}\nexec sleep 60 >/dev/null`], {
    detached: true,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "ignore"],
  });
  started.push(child.pid as number);
  return child;
}

/** A process's command line, or "" once it is gone. */
function cmd(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

const marker = () => ({ name: "MU_CHECK_MARK", value: randomBytes(6).toString("hex") });

/** What `outside(w)` finds once `f` holds of it, or at the bound. */
async function outsideWhen(w: Watch, f: (found: Escapee[]) => boolean): Promise<Escapee[]> {
  let found = outside(w);
  for (let i = 0; i < 200 && !f(found); i++) {
    await new Promise((r) => setTimeout(r, 25));
    found = outside(w);
  }
  return found;
}

/** The bound of each wait here: the processes are local and start at once. */
const WAIT_MS = 5_000;

describe.skipIf(process.platform !== "linux")(
  "finding what a plugin started outside its group",
  () => {
    it("a child in a session of its own is found by marker and by ancestry; one in the group is not", async () => {
      const m = marker();
      const p = leader("setsid sleep 60 & a=$!; sleep 60 & echo $a $!", { [m.name]: m.value });
      const [away, inGroup] = await pids(p, 2);
      const w: Watch = { ...m, leader: p.pid, known: new Map() };
      // Once setsid has run the sleep (before, it shows as setsid).
      const found = await outsideWhen(
        w,
        (f) => f.length > 0 && f.every((e) => e.cmdline.startsWith("sleep")),
      );
      expect(found).toHaveLength(1);
      const [e] = found;
      expect(e?.pid).toBe(away);
      expect(e?.by).toBe("marker and ancestry");
      expect(e?.cmdline).toBe("sleep 60");
      expect(e?.pgid).toBe(e?.pid);
      expect(e?.sid).toBe(e?.pid);
      expect(e?.pid).not.toBe(inGroup);
      // Every descendant seen is remembered, in the group or not.
      expect(w.known.has(inGroup as number)).toBe(true);
      expect(w.known.has(away as number)).toBe(true);
    });

    it("a process with the marker that is no descendant is found by marker alone", async () => {
      const m = marker();
      const stray = leader("sleep 60 & echo $!", { [m.name]: m.value });
      await pids(stray, 1);
      const plugin = leader("echo $$");
      await pids(plugin, 1);
      const found = outside({ ...m, leader: plugin.pid, known: new Map() });
      // The stray shell and its sleep carry the marker, and are in no group of the plugin.
      expect(found.map((e) => e.by)).toEqual(["marker", "marker"]);
      expect(found.map((e) => e.pid)).toContain(stray.pid);
    });

    it("a descendant that blanked its environment is found by ancestry, and still once its parent is gone", async () => {
      const m = marker();
      // A middle shell, in the plugin's group, starts the blanked sleep and stays.
      const p = leader("sh -c 'setsid env -i /bin/sleep 60 & echo $! $$; exec sleep 60' &", {
        [m.name]: m.value,
      });
      const [blank] = await pids(p, 2);
      // Until env has run the sleep, the process still holds the marker.
      await until(
        "env to run the sleep",
        () => cmd(blank as number).startsWith("/bin/sleep"),
        WAIT_MS,
      );
      const w: Watch = { ...m, leader: p.pid, known: new Map() };
      const found = await outsideWhen(w, (f) => f.some((e) => e.pid === blank));
      expect(found.find((e) => e.pid === blank)?.by).toBe("ancestry");
      // The plugin ends: the sleep is no descendant of it any more, but remembered.
      process.kill(p.pid as number, "SIGKILL");
      await until("the plugin to end", () => !alive(p.pid as number), WAIT_MS);
      const again = outside(w);
      expect(again.find((e) => e.pid === blank)?.by).toBe("ancestry");
      // A watch that never saw it cannot tell.
      expect(outside({ ...m, leader: p.pid, known: new Map() }).some((e) => e.pid === blank)).toBe(
        false,
      );
    });

    it("a process carrying the spare entry is the check's own, and left alone", async () => {
      const m = marker();
      const spare = `MU_CHECK_SPARE=${randomBytes(4).toString("hex")}`;
      const p = leader(`setsid env ${spare} sleep 60 & a=$!; setsid sleep 61 & echo $a $!`, {
        [m.name]: m.value,
      });
      const [own, other] = await pids(p, 2);
      // Until env has run the sleep, the process holds no entry yet.
      await until("env to run the sleep", () => cmd(own as number).startsWith("sleep"), WAIT_MS);
      const w: Watch = { ...m, leader: p.pid, known: new Map(), spare };
      // Only the process with the entry is spared; another escapee is still found.
      const found = await outsideWhen(w, (f) => f.some((e) => e.pid === other));
      expect(found.map((e) => e.pid)).toEqual([other]);
      expect(outside({ ...w, spare: undefined }).some((e) => e.pid === own)).toBe(true);
    });

    it("members lists a group; sweep kills every escapee and returns each once", async () => {
      const m = marker();
      // Each ignores SIGTERM: only the sweep's SIGKILL ends it.
      const p = leader(
        `setsid sh -c "trap '' TERM; exec sleep 60" & a=$!; setsid sh -c "trap '' TERM; exec sleep 61" & echo $a $!`,
        { [m.name]: m.value },
      );
      const ours = new Set(await pids(p, 2));
      await until(
        "both sleeps",
        () => [...ours].every((pid) => cmd(pid).startsWith("sleep")),
        WAIT_MS,
      );
      const w: Watch = { ...m, leader: p.pid, known: new Map() };
      await until("two escapees", () => outside(w).length === 2, WAIT_MS);
      const group = members(p.pid as number);
      expect(group.map((e) => [e.pid, e.by])).toEqual([[p.pid, "group"]]);
      // The sweep signals only what it found; should it find more than this
      // test started (the code under test broken), nothing else is touched.
      const asked: number[] = [];
      const kill = process.kill.bind(process);
      const guarded = () => {
        const spy = vi.spyOn(process, "kill").mockImplementation((pid, sig) => {
          asked.push(pid);
          return ours.has(pid) ? kill(pid, sig) : true;
        });
        try {
          return sweep(w);
        } finally {
          spy.mockRestore();
        }
      };
      const killed = guarded();
      expect(asked.sort()).toEqual([...ours].sort());
      expect(killed.map((e) => e.cmdline).sort()).toEqual(["sleep 60", "sleep 61"]);
      for (const e of killed) await until(`pid ${e.pid} to die`, () => !alive(e.pid), WAIT_MS);
      expect(guarded()).toEqual([]);
      expect(asked).toHaveLength(2);
    });
  },
);
