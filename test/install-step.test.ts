import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenario } from "../sim/runner/load.js";
import { install, installBytes, type Sandbox } from "../sim/runner/sandbox.js";
import type { InstallStep } from "../sim/runner/scenario.js";
import { VirtualFs } from "../sim/virtual/fs.js";

// An install step that gives its file's bytes must lay out the same bytes on
// both engines: a scenario reads them through mu's own file calls, which go
// to the real disk on one engine and to the virtual one on the other.

type Spec = InstallStep["install"];

/** The bytes each engine's install leaves at the step's name. */
function onBoth(spec: Spec): { real: Buffer; virtual: Buffer } {
  const root = mkdtempSync(join(tmpdir(), "mu-install-"));
  try {
    mkdirSync(join(root, "bin"));
    const path = install({ root } as Sandbox, spec);
    const fs = new VirtualFs();
    const kind = spec.kind === "symlink" ? "symlink" : "file";
    fs.install(path, 0o644, kind, undefined, installBytes(spec));
    return { real: readFileSync(path), virtual: Buffer.from(fs.peek(path) ?? []) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe("an install step's own bytes", () => {
  it("text is written as UTF-8, repeated as asked, the same on both engines", () => {
    const { real, virtual } = onBoth({ as: "run.sh", text: "é;", repeat: 3 });
    expect(real.toString("utf8")).toBe("é;é;é;");
    expect(virtual).toEqual(real);
  });

  it("hex writes bytes that are not UTF-8, through a symlink too", () => {
    const { real, virtual } = onBoth({ as: "l1.sh", kind: "symlink", hex: "e90aFF" });
    expect([...real]).toEqual([0xe9, 0x0a, 0xff]);
    expect(virtual).toEqual(real);
  });

  it("a big file from a short step: one MiB and one byte", () => {
    const { real, virtual } = onBoth({ as: "big", text: "#", repeat: 1_048_577 });
    expect(real.length).toBe(1_048_577);
    expect(real.equals(Buffer.alloc(1_048_577, "#"))).toBe(true);
    expect(virtual.equals(real)).toBe(true);
  });

  it("empty text makes an empty file, however often repeated", () => {
    expect(onBoth({ as: "empty", text: "", repeat: 5 }).real.length).toBe(0);
  });

  it("without text or hex the file is the sim's launcher, as before", () => {
    expect(installBytes({ as: "mu-plugin-sim" })).toBeUndefined();
    expect(onBoth({ as: "mu-plugin-sim" }).real.toString()).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});

describe("the schema refuses an install step that cannot mean one thing", () => {
  const refused = (install: string) => {
    const dir = mkdtempSync(join(tmpdir(), "mu-install-"));
    try {
      const file = join(dir, "bad.yaml");
      writeFileSync(
        file,
        `scenario: x\nabout: y\nproves: [link.exec]\nsteps:\n  - install: ${install}\n`,
      );
      expect(() => loadScenario(file)).toThrow(/install/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("text and hex together", () => refused('{as: f, text: "a", hex: "61"}'));
  it("repeat with nothing to repeat", () => refused("{as: f, repeat: 2}"));
  it("bytes for a directory", () => refused('{as: f, kind: directory, text: "a"}'));
  it("hex that is not whole bytes", () => refused('{as: f, hex: "abc"}'));
});
