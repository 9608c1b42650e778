import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runView } from "../host/contract/run-view.js";
import { packageRoot } from "../host/package-root.js";
import { nodeScript, until } from "./helpers.js";
import { alive } from "./sshd.js";

// How `mu plugin check` watches a job's view (job.attach, job.spec): as mu's
// pane would run it, read until the check has seen enough, then its whole
// group killed, so nothing the view started outlives the check. Real
// processes; each case names what the check relies on.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "mu-view-"));
  dirs.push(d);
  return d;
};

/** Until `pid` is gone, within a bound; a killed group may take a moment to be reaped. */
const gone = (pid: number) => until(`pid ${pid} to be gone`, () => !alive(pid), 5_000);

describe("a job's view, as the check runs it", () => {
  it("a view that ends: its stdout, stderr and exit code, each apart", async () => {
    const r = await runView(
      { command: "printf 'a\\nb\\n'; echo oops >&2; exit 3", env: {} },
      20_000,
    );
    expect(r).toEqual({ out: "a\nb\n", err: "oops\n", ended: { code: 3, signal: null } });
  });

  it("runs under sh -c with stdin from /dev/null, in the named directory, with the view's env over mu's", async () => {
    const cwd = scratch();
    const r = await runView(
      {
        command: 'cat; pwd -P; printf "%s\\n" "$MU_VIEW_X"; test -n "$PATH" && echo path',
        env: { MU_VIEW_X: "x y" },
        cwd,
      },
      20_000,
    );
    expect(r.out).toBe(`${cwd}\nx y\npath\n`);
    expect(r.ended).toEqual({ code: 0, signal: null });
  });

  it("once enough is seen, the whole group is killed at once, a background child with it", async () => {
    const r = await runView({ command: "sleep 60 & echo $$ $!; wait", env: {} }, 60_000, (out) =>
      out.endsWith("\n"),
    );
    const [sh, bg] = r.out.trim().split(" ").map(Number);
    await gone(sh as number);
    await gone(bg as number);
  });

  it("enough is asked after each chunk, and a view that never gives it is cut at the bound", async () => {
    const seen: string[] = [];
    const r = await runView({ command: "echo one; sleep 60", env: {} }, 3000, (out) => {
      seen.push(out);
      return false;
    });
    // On a machine too loaded to start the view within the bound, it printed nothing yet.
    expect(r.out === "" ? [] : ["one\n"]).toEqual(seen);
    expect(["", "one\n"]).toContain(r.out);
    // Cut, not ended: its exit (by the kill) is not what the view did.
    expect(r.ended).toBeUndefined();
  });

  it("each stream is kept only up to its bound", async () => {
    const r = await runView(
      {
        command: "head -c 200000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2",
        env: {},
      },
      20_000,
    );
    // Chunks are added while under the bound, so a stream stops within one chunk of it.
    expect(r.out.length).toBeGreaterThanOrEqual(16_384);
    expect(r.out.length).toBeLessThan(16_384 + 65_537);
    expect(r.out).toMatch(/^o+$/);
    expect(r.err.length).toBeGreaterThanOrEqual(4096);
    expect(r.err.length).toBeLessThan(4096 + 65_537);
  });

  it("a view that cannot start: ended with neither code nor signal, and why in err", async () => {
    const r = await runView({ command: "true", env: {}, cwd: join(scratch(), "no-such") }, 20_000);
    expect(r.ended).toEqual({ code: null, signal: null });
    expect(r.err).toMatch(/ENOENT/);
    expect(r.out).toBe("");
  });

  it("a mu that exits while a view runs takes the view's group with it", async () => {
    const d = scratch();
    const mod = join(packageRoot(), "dist/host/contract/run-view.js");
    const pidFile = join(d, "pids");
    const r = nodeScript(
      `import { runView } from ${JSON.stringify(mod)};
       runView({ command: "sleep 60 & echo $$ $! > ${pidFile}; wait", env: {} }, 60_000);
       const t = setInterval(async () => {
         const { existsSync, readFileSync } = await import("node:fs");
         if (existsSync(${JSON.stringify(pidFile)}) && readFileSync(${JSON.stringify(pidFile)}, "utf8").endsWith("\\n")) {
           clearInterval(t);
           process.exit(0);
         }
       }, 20);`,
      {},
      { timeout: 30_000 },
    );
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const [sh, bg] = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
    await gone(sh as number);
    await gone(bg as number);
  });
});
