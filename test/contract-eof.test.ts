import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eof } from "../host/contract/eof.js";
import { members } from "../host/contract/escapees.js";
import { type RunContext, Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import type { InitializeResult } from "../host/protocol/declaration.js";
import { until } from "./helpers.js";

// The eof check's verdict, in-process: the two starts it makes are modelled
// (how the stop sequence ended, whether the group emptied after a bare EOF),
// while who is still in a group is read from /proc, from a real process
// group this test starts and kills itself. How real plugins end is proved
// against plugins on the wire (the `serial` break) in
// test/contract-fixtures.test.ts.

const GRACE = 5000;
const LINK = { seams: { link: {} }, instance: "i1" } as unknown as InitializeResult;
const NO_LINK = { seams: {}, instance: "i1" } as unknown as InitializeResult;

const children: ChildProcess[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  // Each group is the test's own (a detached child's), so the whole of it goes.
  for (const c of children.splice(0)) {
    try {
      process.kill(-(c.pid as number), "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** A real process group of this test's own: one sleep, or with `more` a second one beside its leader. */
async function group(more = false): Promise<number> {
  const c = more
    ? spawn("sh", ["-c", "sleep 62 & exec sleep 60"], { detached: true, stdio: "ignore" })
    : spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  children.push(c);
  const pid = c.pid as number;
  await until("the sleep to be running", () => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sleep");
    } catch {
      return false;
    }
  });
  return pid;
}

interface Start {
  /** The stop sequence had to kill the group. */
  forced?: boolean;
  /** After a bare EOF, the group empties at this many ms (never, if absent). */
  emptiesAt?: number;
  /** The group's id, a real one when the test wants its members read. */
  pgid?: number;
  /** The stop sequence takes this long. */
  stopMs?: number;
  /** Whether time passed the look before mu's kill (when forced): true unless false. */
  looked?: boolean;
}

/** The two starts eof makes, a then b, modelled; answers the run's context and what each start saw. */
function model(a: Start, b: Start, more: Partial<RunContext> = {}) {
  const timers: { ms: number; fn: () => void; cancelled: boolean }[] = [];
  const opened: unknown[][] = [];
  const seen = {
    calls: [] as { method: string; params: unknown; timeout: unknown }[],
    killed: 0,
    closed: 0,
    closedInput: 0,
    stops: [] as unknown[][],
  };
  const starts = [a, b];
  // Each start keeps time of its own: the two run at once.
  const groups = new Map<number, { st: Start; now: () => number }>();
  vi.spyOn(Session, "open").mockImplementation(async (...args) => {
    opened.push(args.slice(1));
    const st = starts.shift() as Start;
    const pgid = st.pgid ?? 900_000 + starts.length;
    let clock = 0;
    groups.set(pgid, { st, now: () => clock });
    const s = {
      call: (method: string, params: unknown, timeout: unknown) => {
        seen.calls.push({ method, params, timeout });
        return new Promise(() => {});
      },
      sleep: async (ms: number) => {
        clock += ms;
      },
      now: () => clock,
      close: async () => {
        seen.closed++;
      },
      proc: {
        pgid,
        stop: async (...args: unknown[]) => {
          seen.stops.push(args);
          clock += st.stopMs ?? 40;
          // Time passes past the look before mu's kill when the plugin outlives the grace.
          if (st.forced && st.looked !== false) for (const t of timers) if (!t.cancelled) t.fn();
          return { forced: st.forced === true };
        },
        child: {
          closeInput: () => {
            seen.closedInput++;
          },
        },
        killNow: () => {
          seen.killed++;
        },
      },
    };
    return s as unknown as Session;
  });
  const ctx = {
    runId: "r1",
    io: {
      ports: {
        clock: {
          setTimer: (ms: number, fn: () => void) => {
            const t = { ms, fn, cancelled: false };
            timers.push(t);
            return {
              cancel: () => {
                t.cancelled = true;
              },
            };
          },
        },
        liveness: {
          groupEmpty: (pgid: number) => {
            const g = groups.get(pgid);
            return g?.st.emptiesAt !== undefined && g.now() >= g.st.emptiesAt;
          },
        },
      },
    },
    ...more,
  } as unknown as RunContext;
  return { ctx, seen, timers, opened };
}

describe("the eof check's verdict", () => {
  it("passes a plugin whose group empties both ways, with a call in flight, naming each time", async () => {
    const { ctx, seen, opened } = model({ stopMs: 40 }, { emptiesAt: 260 });
    const out = await eof(ctx, LINK);
    expect(out).toEqual({
      result: "pass",
      detail:
        "link.exec 'sleep 8' in flight: the stop sequence emptied the group in 40 ms, a bare EOF in 60 ms (limit 5000 ms each)",
      evidence: [],
    });
    expect(seen.calls).toEqual([
      {
        method: "link.exec",
        params: {
          target: { host: { name: CHECK_HOST, instance: "i1" } },
          script: "sleep 8",
          cwd: ".",
          timeoutMs: 20_000,
        },
        timeout: 20_000 + GRACE,
      },
      expect.objectContaining({ method: "link.exec" }),
    ]);
    expect(seen.closedInput).toBe(1);
    expect(seen.killed).toBe(0);
    expect(seen.stops).toEqual([["normal", "contract suite: the stop sequence"]]);
    expect(seen.closed).toBe(2);
    expect(ctx.outlivesStop).toBeUndefined();
    expect(opened).toEqual([
      ["eof", []],
      ["eof", []],
    ]);
  });

  it("sends the call in flight to --host when one was given, and none without a link", async () => {
    const { ctx, seen } = model({}, { emptiesAt: 200 }, { linkTarget: { host: { name: "box" } } });
    await eof(ctx, LINK);
    expect(seen.calls[0].params).toMatchObject({ target: { host: { name: "box" } } });
    const other = model({}, { emptiesAt: 200 });
    const out = await eof(other.ctx, NO_LINK);
    expect(out.detail).toMatch(/^no call in flight \(no link seam\): the stop sequence emptied/);
    expect(other.seen.calls).toEqual([]);
  });

  it("fails a plugin the stop sequence had to kill, naming who was still in its group", async () => {
    const pgid = await group();
    const { ctx, timers } = model({ forced: true, pgid }, { emptiesAt: 200 });
    const out = await eof(ctx, LINK);
    expect(out.result).toBe("fail");
    expect(out.detail).toBe(
      "the plugin did not exit within the grace once told to stop (the later checks kill each of their starts as soon as they stop it, not waiting the grace out)",
    );
    expect(out.evidence).toEqual([
      `after $/cancel, shutdown and EOF the group (${pgid}) still ran 5000 ms later and mu killed it:`,
      `pid ${pgid}: sleep 60`,
    ]);
    // the look comes just before mu's kill would hide the group
    expect(timers[0].ms).toBe(GRACE - 300);
    expect(ctx.outlivesStop).toBe(true);
  });

  it("says so when the group emptied at the last moment", async () => {
    const { ctx } = model({ forced: true, pgid: 999_999 }, { emptiesAt: 200 });
    const out = await eof(ctx, LINK);
    expect(out.evidence).toEqual([
      "after $/cancel, shutdown and EOF the group (999999) still ran 5000 ms later and mu killed it:",
      "(the group emptied at the last moment)",
    ]);
  });

  it("leaves the suite's own launcher, its group's leader, out of who was still there", async () => {
    const pgid = await group(true);
    await until("the second sleep", () => members(pgid).length === 2);
    const { ctx } = model(
      { forced: true, pgid },
      { emptiesAt: 200 },
      {
        launcher: { launch: (() => {}) as never, reports: "" },
      },
    );
    const out = await eof(ctx, LINK);
    expect(out.evidence.slice(1)).toEqual([expect.stringMatching(/^pid \d+: sleep 62$/)]);
    const bare = model({ forced: true, pgid }, { emptiesAt: 200 });
    const all = await eof(bare.ctx, LINK);
    expect(all.evidence.slice(1)).toHaveLength(2);
    expect(all.evidence).toContain(`pid ${pgid}: sleep 60`);
    expect(all.evidence.some((l) => /^pid \d+: sleep 62$/.test(l))).toBe(true);
  });

  it("a stop that was forced before the look names nobody, rather than guessing", async () => {
    const { ctx } = model({ forced: true, looked: false, pgid: 999_998 }, { emptiesAt: 200 });
    const out = await eof(ctx, LINK);
    expect(out.evidence).toEqual([
      "after $/cancel, shutdown and EOF the group (999998) still ran 5000 ms later and mu killed it:",
      "(the group emptied at the last moment)",
    ]);
  });

  it("a group that empties only as the grace runs out after a bare EOF fails", async () => {
    const { ctx } = model({}, { emptiesAt: 200 + GRACE });
    const out = await eof(ctx, LINK);
    expect(out.result).toBe("fail");
  });

  it("a bare-EOF start that cannot be made fails the check with its reason", async () => {
    const { ctx } = model({}, { emptiesAt: 200 });
    const boom = new Error("the plugin could not be started again");
    const open = vi.mocked(Session.open);
    const real = open.getMockImplementation();
    let n = 0;
    open.mockImplementation(async (...a) => {
      if (n++ === 1) throw boom;
      return (real as typeof Session.open)(...a);
    });
    await expect(eof(ctx, LINK)).rejects.toBe(boom);
  });

  it("fails a plugin whose group outlives a bare EOF by the grace, kills it, and names who was there", async () => {
    const pgid = await group();
    const { ctx, seen } = model({}, { pgid });
    const out = await eof(ctx, LINK);
    expect(out.result).toBe("fail");
    expect(out.evidence).toEqual([
      `after stdin closed (no shutdown) the group (${pgid}) still ran 5000 ms later:`,
      `pid ${pgid}: sleep 60`,
    ]);
    expect(seen.killed).toBe(1);
    expect(ctx.outlivesStop).toBe(true);
  });

  it("a group that empties just inside the grace after a bare EOF passes", async () => {
    const { ctx } = model({}, { emptiesAt: 200 + GRACE - 20 });
    const out = await eof(ctx, LINK);
    expect(out.detail).toMatch(/a bare EOF in 4980 ms \(limit 5000 ms each\)$/);
  });

  it("a start that cannot be made fails the check with its reason, the other start still ended", async () => {
    const { ctx, seen } = model({}, { emptiesAt: 200 });
    const boom = new Error("the plugin could not be started");
    const open = vi.mocked(Session.open);
    const real = open.getMockImplementation();
    let n = 0;
    open.mockImplementation(async (...a) => {
      if (n++ === 0) throw boom;
      return (real as typeof Session.open)(...a);
    });
    await expect(eof(ctx, LINK)).rejects.toBe(boom);
    expect(seen.closed).toBe(1);
  });
});
