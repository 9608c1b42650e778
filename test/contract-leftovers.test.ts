import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { noteDirs, tidy } from "../host/contract/leftovers.js";
import type { Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import type { InitializeResult } from "../host/protocol/declaration.js";
import { checkContext, sh } from "./fake-provider.js";

// The end of a `mu plugin check` run, in-process: the jobs a check left
// running are stopped, and what the run made in the plugin's login directory
// is swept by name, through the plugin's own link.exec. The "plugin" here runs
// each script under sh in a temp directory, so the sweep's shell is the real
// one; the same clean-up against plugins on the wire is in
// test/contract-fixtures.test.ts.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const hello = (seams: object): InitializeResult =>
  ({ instance: "inst-1", seams }) as unknown as InitializeResult;
const JOB_AND_LINK = hello({ link: {}, job: {} });

/** A job-and-link plugin whose login directory is a temp directory. */
function backend(exec?: (script: string, dir: string) => unknown) {
  const home = mkdtempSync(join(tmpdir(), "mu-leftovers-"));
  dirs.push(home);
  const calls: { method: string; params: Record<string, unknown> }[] = [];
  let opened = 0;
  let closed = 0;
  const open = async () => {
    opened++;
    return {
      call: async (method: string, params: Record<string, unknown>) => {
        calls.push({ method, params });
        if (method === "link.exec") return (exec ?? sh)(params.script as string, home);
        return null;
      },
      close: async () => {
        closed++;
      },
    } as unknown as Session;
  };
  return { home, calls, open, opened: () => opened, closed: () => closed };
}

const ctxWith = (jobs: [string, boolean][] = [], fenced: string[] = []) => {
  const ctx = checkContext();
  for (const [k, stopped] of jobs) ctx.made.jobs.set(k, { target: { job: k }, stopped });
  for (const k of fenced) ctx.made.fenced.add(k);
  return ctx;
};

describe("the note of the login directory before the first job", () => {
  it("is taken only for a plugin with a job and a link, and no host seam", async () => {
    for (const seams of [{ link: {} }, { job: {} }, { link: {}, job: {}, host: {} }]) {
      const b = backend();
      expect(await noteDirs(checkContext(), hello(seams), b.open)).toBe(false);
      expect(b.opened()).toBe(0);
    }
  });

  it("lists the directories down to four levels, ends with its completion line, and closes its start", async () => {
    const b = backend();
    mkdirSync(join(b.home, "a/b/c/d/e"), { recursive: true });
    expect(await noteDirs(checkContext(), JOB_AND_LINK, b.open)).toBe(true);
    const listed = readFileSync(join(b.home, ".mu-check-r1-dirs"), "utf8").split("\n");
    expect(listed).toEqual([".", "./a", "./a/b", "./a/b/c", "./a/b/c/d", "# complete", ""]);
    expect(b.calls[0].params).toMatchObject({
      target: { host: { name: CHECK_HOST, instance: "inst-1" } },
      cwd: ".",
    });
    expect(b.closed()).toBe(1);
  });

  it("goes to --host when one was given", async () => {
    const b = backend();
    const ctx = checkContext();
    ctx.linkTarget = { host: { name: "box" } };
    await noteDirs(ctx, JOB_AND_LINK, b.open);
    expect(b.calls[0].params.target).toEqual({ host: { name: "box" } });
  });

  it("counts as taken even when its start or its script fails", async () => {
    expect(
      await noteDirs(checkContext(), JOB_AND_LINK, async () => {
        throw new Error("spawn ENOENT");
      }),
    ).toBe(true);
    const b = backend(() => {
      throw new Error("no answer");
    });
    expect(await noteDirs(checkContext(), JOB_AND_LINK, b.open)).toBe(true);
    expect(b.closed()).toBe(1);
  });
});

describe("the clean-up at the end of a run", () => {
  it("starts nothing when the run made nothing and noted nothing", async () => {
    const b = backend();
    expect(await tidy(checkContext(), JOB_AND_LINK, b.open)).toEqual({ removed: [], left: [] });
    expect(b.opened()).toBe(0);
  });

  it("for a provider, releases machines instead, and sweeps nothing", async () => {
    const b = backend();
    const out = await tidy(
      ctxWith([["j1", false]]),
      hello({ host: {}, link: {}, job: {} }),
      b.open,
    );
    expect(out).toEqual({ removed: [], left: [] });
    expect(b.opened()).toBe(0);
  });

  it("stops each job no stop proved gone, by its target and key, and names the ones still unproven", async () => {
    const b = backend();
    const out = await tidy(
      ctxWith([
        ["j1", true],
        ["j2", false],
      ]),
      JOB_AND_LINK,
      b.open,
    );
    expect(b.calls[0]).toEqual({
      method: "job.stop",
      params: { target: { job: "j2" }, key: "j2" },
    });
    expect(b.calls.filter((c) => c.method === "job.stop")).toHaveLength(1);
    expect(out.removed[0]).toBe("stopped 1 of the 2 jobs it started");
    expect(out.left[0]).toEqual({
      what: "job j2: no job.stop proved it gone; stop it on the backend",
    });
    expect(b.closed()).toBe(1);
  });

  it("while a job may run, removes nothing and names each entry with its command", async () => {
    const b = backend();
    writeFileSync(join(b.home, ".mu-check-r1-a"), "x");
    const out = await tidy(ctxWith([["j2", false]]), JOB_AND_LINK, b.open);
    expect(existsSync(join(b.home, ".mu-check-r1-a"))).toBe(true);
    expect(out.left).toContainEqual({
      what: ".mu-check-r1-a",
      command: "rm -rf '.mu-check-r1-a' (in the login directory, once no job of this run runs)",
    });
  });

  it("with every job stopped, removes the run's entries, the directories its jobs made, and names the plugin's own", async () => {
    const b = backend();
    mkdirSync(join(b.home, "state"));
    writeFileSync(join(b.home, "state/keep"), "");
    mkdirSync(join(b.home, "inbox"));
    await noteDirs(checkContext(), JOB_AND_LINK, b.open);
    // made by the run's jobs, after the note
    mkdirSync(join(b.home, "runs/x"), { recursive: true });
    writeFileSync(join(b.home, "runs/x/mu-check-r1-j1"), "");
    mkdirSync(join(b.home, "inbox/mu-check-r1-j1"));
    writeFileSync(join(b.home, "state/mu-check-r1-j1.json"), "{}");
    writeFileSync(join(b.home, "mu-check-other-j1"), "");
    const out = await tidy(
      ctxWith([
        ["j1", true],
        ["j2", true],
      ]),
      JOB_AND_LINK,
      b.open,
      true,
    );
    const [stopped, removed, emptied] = out.removed;
    expect(stopped).toBe("stopped every job it started (2)");
    // find lists in the file system's order
    const prefix = "removed through link.exec what the run left in the login directory: ";
    expect(removed.startsWith(prefix)).toBe(true);
    expect(removed.slice(prefix.length).split(" ").sort()).toEqual([
      "inbox/mu-check-r1-j1",
      "runs/x/mu-check-r1-j1",
      "state/mu-check-r1-j1.json",
    ]);
    expect(emptied).toBe("and the directories its jobs made, emptied: runs/x runs");
    expect(out.removed).toHaveLength(3);
    expect(out.left).toEqual([
      {
        what: "inbox: the plugin's own directory, emptied of this run's entries",
        command: "rmdir 'inbox' (in the login directory), if the plugin has no further use for it",
      },
    ]);
    expect(existsSync(join(b.home, "runs"))).toBe(false);
    expect(existsSync(join(b.home, "inbox"))).toBe(true);
    expect(existsSync(join(b.home, "state/keep"))).toBe(true);
    expect(existsSync(join(b.home, "mu-check-other-j1"))).toBe(true);
    expect(existsSync(join(b.home, ".mu-check-r1-dirs"))).toBe(false);
  });

  it("without a whole note, empties directories but removes none of them", async () => {
    const b = backend();
    mkdirSync(join(b.home, "runs"));
    writeFileSync(join(b.home, "runs/mu-check-r1-j1"), "");
    writeFileSync(join(b.home, ".mu-check-r1-dirs"), ".\n");
    const out = await tidy(ctxWith([], ["mu-check-r1-f"]), JOB_AND_LINK, b.open);
    expect(out.removed).toEqual([
      "removed through link.exec what the run left in the login directory: runs/mu-check-r1-j1",
    ]);
    expect(out.left.map((l) => l.what)).toEqual([
      "runs: the plugin's own directory, emptied of this run's entries",
    ]);
    expect(existsSync(join(b.home, "runs"))).toBe(true);
  });

  it("a fenced key alone is reason enough to sweep; one that finds nothing says nothing", async () => {
    const b = backend();
    const out = await tidy(ctxWith([], ["k"]), JOB_AND_LINK, b.open);
    expect(b.calls.map((c) => c.method)).toEqual(["link.exec"]);
    expect(b.calls[0].params.target).toEqual({ host: { name: CHECK_HOST, instance: "inst-1" } });
    expect(out).toEqual({ removed: [], left: [] });
  });

  it("sweeps on --host when one was given", async () => {
    const b = backend();
    const ctx = ctxWith([], ["k"]);
    ctx.linkTarget = { host: { name: "box" } };
    await tidy(ctx, JOB_AND_LINK, b.open);
    expect(b.calls[0].params.target).toEqual({ host: { name: "box" } });
  });

  it("without a link, names the plugin's record of the run's keys, which nothing can remove", async () => {
    const b = backend();
    const out = await tidy(ctxWith([["j1", true]]), hello({ job: {} }), b.open);
    expect(out).toEqual({
      removed: ["stopped every job it started (1)"],
      left: [
        {
          what: "the plugin's record of the keys mu-check-r1-* (the protocol has no call to forget a job, and the plugin declares no link to remove it through)",
        },
      ],
    });
    expect(b.calls).toEqual([]);
  });

  it("a sweep that fails without naming anything is named with its result", async () => {
    const b = backend(() => ({ exitCode: 127, stdout: "", stderr: "sh: find: not found" }));
    const out = await tidy(ctxWith([], ["k"]), JOB_AND_LINK, b.open);
    expect(out.left).toEqual([
      {
        what: 'whatever the plugin keeps for the keys mu-check-r1-*: the sweep through link.exec failed ({"exitCode":127,"stderr":"sh: find: not found","stdout":""})',
      },
    ]);
  });

  it("a sweep that failed yet named what it did is read for what it named", async () => {
    const b = backend(() => ({
      exitCode: 1,
      stdout: "gone ./a-mu-check-r1-x\nkept ./b-mu-check-r1-y\n",
      stderr: "",
    }));
    const out = await tidy(ctxWith([], ["k"]), JOB_AND_LINK, b.open);
    expect(out).toEqual({
      removed: [
        "removed through link.exec what the run left in the login directory: a-mu-check-r1-x",
      ],
      left: [
        {
          what: "b-mu-check-r1-y",
          command:
            "rm -rf 'b-mu-check-r1-y' (in the login directory, once no job of this run runs)",
        },
      ],
    });
  });

  it("a failed sweep's result is cut to 200 characters", async () => {
    const b = backend(() => ({ exitCode: 1, stdout: "", stderr: "e".repeat(500) }));
    const out = await tidy(ctxWith([], ["k"]), JOB_AND_LINK, b.open);
    const shown = `{"exitCode":1,"stderr":"${"e".repeat(500)}`;
    expect(out.left).toEqual([
      {
        what: `whatever the plugin keeps for the keys mu-check-r1-*: the sweep through link.exec failed (${shown.slice(0, 200)})`,
      },
    ]);
  });

  it("a clean-up that cannot start the plugin says so", async () => {
    const out = await tidy(ctxWith([["j1", false]]), JOB_AND_LINK, async () => {
      throw new Error("spawn ENOENT");
    });
    expect(out).toEqual({
      removed: [],
      left: [
        {
          what: "whatever the plugin keeps for the keys mu-check-r1-*: the cleanup could not run (spawn ENOENT)",
        },
      ],
    });
  });

  it("a job.stop that fails does not stop the sweep", async () => {
    const b = backend();
    const open = async () => {
      const s = await b.open();
      const call = s.call.bind(s);
      (s as unknown as { call: typeof call }).call = async (method, params, t) => {
        if (method === "job.stop") throw new Error("no answer");
        return call(method, params, t);
      };
      return s;
    };
    await tidy(ctxWith([["j1", false]]), JOB_AND_LINK, open);
    expect(b.calls.map((c) => c.method)).toEqual(["link.exec"]);
  });
});
