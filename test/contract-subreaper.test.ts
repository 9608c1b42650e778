import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { subreaperLauncher } from "../host/contract/subreaper.js";

// Where `mu plugin check` cannot set a child subreaper it still runs, watching
// by environment marker only, and its containment line names the reason. The
// reasons are decided here, each from what this machine offers: the
// platform, a python3 on the PATH mu was given, and what that python3 says.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A PATH of one directory holding a `python3` made of `body` (a shell script), or none. */
function pathWith(body?: string): string {
  const d = mkdtempSync(join(tmpdir(), "mu-subreaper-"));
  dirs.push(d);
  if (body !== undefined) {
    writeFileSync(join(d, "python3"), `#!/bin/sh\n${body}\n`);
    chmodSync(join(d, "python3"), 0o755);
  }
  return d;
}

describe.skipIf(process.platform !== "linux")("the child subreaper's launcher", () => {
  it("a PATH without python3: 'python3 not found'", () => {
    expect(subreaperLauncher({ PATH: pathWith() })).toEqual({ why: "python3 not found" });
  });

  it("a python3 whose probe fails: it could not set a child subreaper", () => {
    // Even where it named an interpreter before it failed.
    for (const body of ["exit 1", "echo /usr/bin/python3; exit 1"])
      expect(subreaperLauncher({ PATH: pathWith(body) })).toEqual({
        why: "python3 could not set a child subreaper",
      });
  });

  it("a python3 that succeeds without naming itself by an absolute path is not used", () => {
    for (const body of ["exit 0", "echo python3"])
      expect(subreaperLauncher({ PATH: pathWith(body) })).toEqual({
        why: "python3 could not set a child subreaper",
      });
  });

  it("the probe is handed to python3 isolated, and the interpreter it names runs the launcher", () => {
    // A stand-in that records its arguments and answers as a working probe would.
    const d = pathWith(`printf '%s\\n' "$@" > "\${0%/*}/args"\necho "  /opt/py/bin/python3  "`);
    const got = subreaperLauncher({ PATH: d });
    if (!("launch" in got)) throw new Error(`no launcher: ${got.why}`);
    const args = readFileSync(join(d, "args"), "utf8");
    expect(args.startsWith("-I\n-S\n-c\n")).toBe(true);
    // The probe sets the attribute (36) and reads it back (37), then names the interpreter.
    expect(args).toContain("prctl(36, 1, 0, 0, 0) == 0");
    expect(args).toContain("prctl(37, ctypes.byref(v), 0, 0, 0) == 0 and v.value == 1");
    expect(args).toContain("print(sys.executable)");
    const argv = got.launch("/r/start-1");
    expect(argv.slice(0, 4)).toEqual(["/opt/py/bin/python3", "-I", "-S", "-c"]);
    expect(argv.at(-1)).toBe("/r/start-1");
    expect(argv).toHaveLength(6);
  });

  it("with a real python3, the launcher holds a re-parented process and reports it", () => {
    // Where python3 runs at all, the probe must succeed with it (Linux 3.4+).
    if (spawnSync("python3", ["-c", "pass"]).status !== 0) return;
    const got = subreaperLauncher(process.env);
    if (!("launch" in got)) throw new Error(`no launcher: ${got.why}`);
    const d = pathWith();
    const report = join(d, "held");
    // The plugin stands in as a shell that leaves a grandchild behind (a
    // double fork), which the launcher, as subreaper, must still hold.
    const [exe, ...rest] = got.launch(report);
    const r = spawnSync(
      exe as string,
      [...rest, "/bin/sh", "-c", "(sleep 30 </dev/null >/dev/null 2>&1 &) ; exit 7"],
      {
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(r.status).toBe(7);
    const held = readFileSync(report, "utf8").trim().split("\n");
    expect(held).toHaveLength(1);
    const [pid] = (held[0] as string).split(" ").map(Number);
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("sleep");
    process.kill(pid as number, "SIGKILL");
  });
});

describe("a machine that is not Linux", () => {
  it("has no launcher, and says why", () => {
    const was = Object.getOwnPropertyDescriptor(process, "platform") as PropertyDescriptor;
    Object.defineProperty(process, "platform", { value: "darwin" });
    try {
      expect(subreaperLauncher({ PATH: "/nonexistent" })).toEqual({ why: "not Linux" });
    } finally {
      Object.defineProperty(process, "platform", was);
    }
  });
});
