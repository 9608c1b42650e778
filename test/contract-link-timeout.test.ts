import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecResult } from "../host/contract/link-roundtrip.js";
import { linkTimeout, ownSession, timeoutFor } from "../host/contract/link-timeout.js";
import type { Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import type { LinkSeam } from "../host/protocol/declaration.js";
import { failure, outside, sh } from "./fake-provider.js";
import { until } from "./helpers.js";

// link.timeout, in-process. Most cases model the plugin: its answer to the
// script past timeoutMs, and which of the script's four writers go on
// rewriting their markers while the check waits, on a virtual clock; the
// check's probes and its clean-up run for real under sh in a temp login
// directory. One case runs the check's script itself, for real, under a
// plugin that answers at once and kills nothing, and so proves the writers
// the check relies on. The real-process runs against plugins on the wire
// are in test/contract-fixtures.test.ts.

const TAG = "mu-check-r1-t";
const TIMEOUT = 2000;
/** The limit the check gives its own probes: every other link.exec is the script past its limit. */
const PROBE_MS = 10_000;
const WRITERS = ["background", "pipeline", "session", "blank"] as const;
type Writer = (typeof WRITERS)[number];
const PLACE = { target: { host: { name: CHECK_HOST } }, label: "on box" };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const link = (remoteOnTimeout: string) => ({ remoteOnTimeout }) as unknown as LinkSeam;
const marker = (w: Writer) => `.${TAG}.late-${w}`;

interface Model {
  /** What link.exec answers for the script past timeoutMs. */
  answer?: ExecResult | Error;
  /** Whether the script got as far as its first line. */
  begins?: boolean;
  /** The writers that go on after the answer, until the check's stop file. */
  live?: Writer[];
  /** A probe the plugin fails. */
  probeFails?: boolean;
  /** Where the virtual clock starts. */
  at?: number;
}

/** A link plugin modelled as the cases need, with a login directory of its own. */
function modelled(m: Model = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mu-link-timeout-"));
  dirs.push(dir);
  const live = new Set<Writer>(m.live ?? []);
  const scripts: { script: string; timeoutMs: number }[] = [];
  let clock = m.at ?? 0;
  const rewrite = () => {
    for (const w of live) writeFileSync(join(dir, marker(w)), "");
  };
  const s = {
    now: () => clock,
    sleep: async (ms: number) => {
      clock += ms;
      rewrite();
    },
    call: async (method: string, params: { script: string; timeoutMs: number; cwd: string }) => {
      expect(method).toBe("link.exec");
      expect(params.cwd).toBe(".");
      scripts.push({ script: params.script, timeoutMs: params.timeoutMs });
      if (params.timeoutMs !== PROBE_MS) {
        if (m.begins !== false) writeFileSync(join(dir, `.${TAG}.start`), "");
        for (const w of WRITERS) writeFileSync(join(dir, marker(w)), "");
        clock += params.timeoutMs;
        if (m.answer instanceof Error) throw m.answer;
        return m.answer ?? { exitCode: null, stdout: "", stderr: "" };
      }
      if (m.probeFails) throw new ErrorReply("link.exec", "retryable", "connection reset");
      // The clean-up's stop file ends every writer; its two beats cost nothing here.
      if (params.script.startsWith(`: > .${TAG}.late-stop;`)) live.clear();
      return sh(params.script.replace(/sleep \d+;/, ""), dir);
    },
  } as unknown as Session;
  return { s, dir, scripts, left: () => readdirSync(dir) };
}

describe("link.timeout's limits", () => {
  it("gives a slow link a longer limit, between 1.5 s and 15 s", () => {
    expect([0, 100, 500, 2000, 4666, 4667, 60_000].map(timeoutFor)).toEqual([
      1500, 1500, 2500, 7000, 14_998, 15_000, 15_000,
    ]);
  });

  it("names the session the check's own script makes, so the containment scan spares it", () => {
    expect(ownSession("abc")).toBe("MU_CHECK_OWN_SESSION=abc");
  });
});

describe("link.timeout against a modelled plugin", () => {
  it("passes stopped when nothing writes after the answer, and leaves nothing behind", async () => {
    const p = modelled();
    const out = await linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT);
    expect(out.detail).toBe(
      "on box: answered exitCode null after 2000 ms (timeoutMs 2000); none of its background job, pipeline member, own-session and blank-environment processes ran on (stopped)",
    );
    expect(p.scripts.map((x) => x.timeoutMs)).toEqual([2000, 10_000, 10_000]);
    expect(p.left()).toEqual([]);
  });

  it("fails stopped when writers come back, naming each, and stops them before it answers", async () => {
    const p = modelled({ live: ["session", "blank"] });
    const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "remoteOnTimeout is 'stopped', yet a process in a session of its own, a process with a cleared environment the script started went on running after the answer",
    );
    expect(f.evidence).toEqual([
      "each rewrites its marker in the login directory every second; the markers were removed as the answer came and were back 1600 ms later",
    ]);
    expect(p.scripts.at(-1)?.script).toBe(
      `: > .${TAG}.late-stop; sleep 2; rm -f .${TAG}.late-stop .${TAG}.start ${WRITERS.map(marker).join(" ")}; true`,
    );
    expect(p.scripts.at(-1)?.timeoutMs).toBe(10_000);
    expect(p.left()).toEqual([]);
  });

  it("each writer alone is seen", async () => {
    const names = {
      background: "a background job",
      pipeline: "a pipeline member",
      session: "a process in a session of its own",
      blank: "a process with a cleared environment",
    };
    for (const w of WRITERS) {
      const p = modelled({ live: [w] });
      const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
      expect(f.detail).toBe(
        `remoteOnTimeout is 'stopped', yet ${names[w]} the script started went on running after the answer`,
      );
    }
  });

  it("stopping waits out the grace before it looks, and says so", async () => {
    const p = modelled();
    const out = await linkTimeout(p.s, link("stopping"), PLACE, TAG, TIMEOUT);
    expect(out.detail).toMatch(/ran on \(stopping\)$/);
    expect(p.s.now()).toBe(TIMEOUT + 5000 + 1600);
    const q = modelled({ live: ["background"] });
    const f = await failure(linkTimeout(q.s, link("stopping"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "remoteOnTimeout is 'stopping', yet a background job the script started went on running after the answer and its 5000 ms grace",
    );
    expect(f.evidence).toEqual([
      "each rewrites its marker in the login directory every second; the markers were removed at the end of the grace and were back 1600 ms later",
    ]);
  });

  it("counts the answer's time from the send, not from the clock's zero", async () => {
    const p = modelled({ at: 5000 });
    const out = await linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT);
    expect(out.detail).toMatch(/^on box: answered exitCode null after 2000 ms \(timeoutMs 2000\)/);
  });

  it("each writer ends by itself after timeoutMs, the grace and four seconds more, stop file or not", async () => {
    const p = modelled();
    await linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT);
    // 2 s + 5 s + 4 beats
    expect(p.scripts[0].script).toContain(
      "while [ $i -lt 11 ] && [ ! -e .mu-check-r1-t.late-stop ]",
    );
    const q = modelled();
    await linkTimeout(q.s, link("stopped"), PLACE, TAG, 2500);
    expect(q.scripts[0].script).toContain("while [ $i -lt 12 ]");
  });

  it("stopped does not wait the grace", async () => {
    const p = modelled();
    await linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT);
    expect(p.s.now()).toBe(TIMEOUT + 1600);
  });

  it("unknown promises nothing: it passes with writers alive, then stops them and clears the markers", async () => {
    const p = modelled({ live: [...WRITERS] });
    const out = await linkTimeout(p.s, link("unknown"), PLACE, TAG, TIMEOUT);
    expect(out.detail).toBe(
      "on box: answered exitCode null after 2000 ms (timeoutMs 2000); remoteOnTimeout unknown promises nothing after that",
    );
    // its look leaves the markers to the clean-up, which runs for unknown even on a pass
    expect(p.scripts[2].script).not.toMatch(/rm -f/);
    expect(p.scripts).toHaveLength(4);
    expect(p.left()).toEqual([]);
  });

  it("fails an answer that is not exitCode null, showing it", async () => {
    const p = modelled({ answer: { exitCode: 0, stdout: "", stderr: "" } });
    const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "a script past timeoutMs 2000 was answered with exitCode 0 after 2000 ms, not exitCode null",
    );
    expect(f.evidence).toEqual(['{"exitCode":0,"stderr":"","stdout":""}']);
    expect(p.left()).toEqual([]);
  });

  it("fails a script that never began", async () => {
    const p = modelled({ begins: false });
    const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "on box: answered exitCode null after 2000 ms (timeoutMs 2000), but the script never began",
    );
    expect(f.evidence).toEqual([
      `it would have written .${TAG}.start in the login directory at once; the next script found none`,
    ]);
  });

  it("fails a link.exec past timeoutMs that answers an error, with the plugin's words", async () => {
    const p = modelled({ answer: new ErrorReply("link.exec", "retryable", "timed out") });
    const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "a script that outlives timeoutMs 2000: link.exec answered an error (retryable): timed out",
    );
    expect(f.evidence).toEqual(["link.exec answered an error (retryable): timed out"]);
  });

  it("fails when the probe for the markers fails", async () => {
    const p = modelled({ probeFails: true });
    const f = await failure(linkTimeout(p.s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "the link.exec that looks for the markers failed: link.exec answered an error (retryable): connection reset",
    );
    expect(f.evidence).toEqual(["link.exec answered an error (retryable): connection reset"]);
  });
});

describe("link.timeout's own script, run for real", () => {
  it("under a plugin that answers at once and kills nothing, all four writers are seen and then stopped", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "mu-link-timeout-real-"));
    dirs.push(dir);
    const s = {
      now: () => Date.now(),
      sleep: (ms: number) => new Promise((r) => setTimeout(r, ms)),
      call: async (_method: string, params: { script: string; timeoutMs: number }) => {
        if (params.timeoutMs !== TIMEOUT) return sh(params.script, dir);
        expect(outside(params.script, dir)).toBeUndefined();
        const child = spawn("sh", ["-c", params.script], { cwd: dir, stdio: "ignore" });
        child.unref();
        // Answered once every writer has begun, as a plugin whose limit passed would.
        await until("the four writers' markers", () =>
          WRITERS.every((w) => existsSync(join(dir, marker(w)))),
        );
        return { exitCode: null, stdout: "", stderr: "" };
      },
    } as unknown as Session;
    const f = await failure(linkTimeout(s, link("stopped"), PLACE, TAG, TIMEOUT));
    expect(f.detail).toBe(
      "remoteOnTimeout is 'stopped', yet a background job, a pipeline member, a process in a session of its own, a process with a cleared environment the script started went on running after the answer",
    );
    // Each writer ends on the stop file (or, missing it, after its last beat) and takes its marker with it.
    await until(
      "every writer to end and remove its marker",
      () => readdirSync(dir).length === 0,
      30_000,
    );
  });
});
