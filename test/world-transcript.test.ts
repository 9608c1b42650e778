import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";

// The runner waits on the transcript (afterSeen) while plugin processes
// append to it. An append into a regular file is not seen whole by a reader
// in another process: the reader can meet the first part of a line. The
// first test fails every time without the rule; the second shows the race
// with real processes, and meets it on most runs.

const worldModule = join(packageRoot(), "dist", "sim", "plugin", "world.js");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-transcript-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the world's transcript, read while a plugin writes it", () => {
  it("leaves out a last line that has no newline yet", () => {
    const w = World.create(dir, {});
    w.record("in", { method: "job.lookup" });
    appendFileSync(join(dir, "transcript.ndjson"), '{"t":1,"dir":"in","pid":1,"msg":{"meth');
    expect(w.transcript().map((e) => e.msg.method)).toEqual(["job.lookup"]);
  });

  it("never fails to parse while another process appends long lines", async () => {
    const w = World.create(dir, {});
    const code = `import(${JSON.stringify(worldModule)}).then(({ World }) => {
      const w = new World(${JSON.stringify(dir)});
      let n = 0;
      const pad = "x".repeat(4000);
      (function next() {
        w.record("in", { method: "job.lookup", pad });
        if (++n < 6000) setImmediate(next);
      })();
    });`;
    const writer = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
    const ended = new Promise((r) => writer.on("exit", r));
    let done = false;
    void ended.then(() => {
      done = true;
    });
    let reads = 0;
    while (!done) {
      expect(() => w.transcript()).not.toThrow();
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    expect(reads).toBeGreaterThan(0);
    expect(w.transcript()).toHaveLength(6000);
  });
});
