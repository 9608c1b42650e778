import { describe, expect, it } from "vitest";
import type { Escapee } from "../host/contract/escapees.js";
import { nothingMade, tally } from "../host/contract/made.js";
import { cleanupLines, junit, line, summary } from "../host/contract/report.js";
import { checkRunner, timed } from "../host/contract/run-checks.js";
import type { RunContext, StartLog } from "../host/contract/session.js";
import { CHECK_HOST, profileTarget } from "../host/contract/target.js";
import { NEVER_CHECKED, uncovered } from "../host/contract/uncovered.js";
import {
  CheckFailed,
  describeCall,
  fail,
  failedCall,
  must,
  type Outcome,
  pass,
  skip,
  type Verdict,
} from "../host/contract/verdict.js";
import { WireLog } from "../host/contract/wire.js";
import { canary, containment, messages } from "../host/contract/wire-checks.js";
import { UsageError } from "../host/errors.js";
import { ErrorReply, NoAnswer } from "../host/plugin/call-errors.js";
import type { InitializeResult } from "../host/protocol/declaration.js";

// The parts of `mu plugin check` that decide what a run says, in-process:
// how a verdict reads (lines, JSON's evidence, JUnit), what a run says it
// did not prove, how a check's throw becomes its failure, what the suite
// counts as made, and how everything a plugin wrote is judged line by line.
// The fixture tests prove the same through whole runs; these reach the
// edges a whole run never shows (a ninth piece of evidence, a control byte
// in JUnit, a second reply, a line cut by the framer).

const v = (over: Partial<Verdict>): Verdict => ({
  id: "link.exec",
  result: "pass",
  detail: "d",
  evidence: [],
  ms: 0,
  ...over,
});

describe("the checklist's words", () => {
  it("marks each result and lines the details up after the id", () => {
    expect(line(v({ result: "pass", detail: "ran" }))).toBe("ok    link.exec         ran");
    expect(line(v({ id: "handshake", result: "skip", detail: "why" }))).toBe(
      "skip  handshake         why",
    );
    expect(line(v({ result: "fail", detail: "broke", evidence: ["a", "b"] }))).toBe(
      "FAIL  link.exec         broke\n        a\n        b",
    );
  });

  it("shows eight pieces of evidence and counts the rest", () => {
    const evidence = Array.from({ length: 11 }, (_, i) => `e${i}`);
    const shown = line(v({ result: "fail", evidence })).split("\n");
    expect(shown.slice(1)).toEqual([
      ...evidence.slice(0, 8).map((e) => `        ${e}`),
      "        … and 3 more (--json lists them all)",
    ]);
    const eight = line(v({ result: "fail", evidence: evidence.slice(0, 8) })).split("\n");
    expect(eight).toHaveLength(9);
    expect(eight.at(-1)).toBe("        e7");
  });

  it("counts each result", () => {
    const vs = [v({}), v({ result: "fail" }), v({ result: "skip" }), v({ result: "skip" })];
    expect(summary("brk", vs)).toBe("brk: 1 passed, 1 failed, 2 skipped");
    expect(summary("brk", [])).toBe("brk: 0 passed, 0 failed, 0 skipped");
  });

  it("says what was removed and what was left, with its command where there is one", () => {
    expect(
      cleanupLines({
        removed: ["job k1", "host k2"],
        left: [{ what: "machine vm-1", command: "rm -rf x" }, { what: "a job" }],
      }),
    ).toEqual([
      "cleaned: job k1",
      "cleaned: host k2",
      "left:    machine vm-1; remove it with: rm -rf x",
      "left:    a job",
    ]);
    expect(cleanupLines({ removed: [], left: [] })).toEqual([]);
  });

  it("writes JUnit with one testcase a check, escaped, and times in seconds", () => {
    const vs = [
      v({ id: "handshake", ms: 1500 }),
      v({ id: "eof", result: "skip", detail: 'no "eof" <here>', ms: 2 }),
      v({ id: "link.exec", result: "fail", detail: "a & b", evidence: ["x\u0001y", "z"], ms: 10 }),
    ];
    expect(junit("p&q", vs)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="mu plugin check" tests="3" failures="1" skipped="1" time="1.512">',
        '  <testsuite name="plugin:p&amp;q" tests="3" failures="1" skipped="1" time="1.512">',
        '    <testcase classname="plugin:p&amp;q" name="handshake" time="1.500"/>',
        '    <testcase classname="plugin:p&amp;q" name="eof" time="0.002">',
        '      <skipped message="no &quot;eof&quot; &lt;here&gt;"/>',
        "    </testcase>",
        '    <testcase classname="plugin:p&amp;q" name="link.exec" time="0.010">',
        '      <failure message="a &amp; b">x\uFFFDy\nz</failure>',
        "    </testcase>",
        "  </testsuite>",
        "</testsuites>",
        "",
      ].join("\n"),
    );
  });
});

describe("what a run says it did not prove", () => {
  it("names the skipped checks, what passing lines left out, and the duties no check reaches", () => {
    const vs = [
      v({ id: "handshake" }),
      v({ id: "link.push", result: "skip", detail: "no push" }),
      v({ id: "link.fetch", result: "skip" }),
      v({ id: "link.timeout", detail: "killed the group (not exercised: a pipeline)" }),
      v({ id: "link.cwd", detail: "not provoked: the plugin never saw a relative cwd" }),
      v({ id: "link.output", result: "fail", detail: "broke (not exercised: x)" }),
      v({ id: "link.git-timeout", detail: "quoted '(not exercised: y)' mid-line" }),
    ];
    expect(uncovered(vs)).toEqual([
      "not run: link.push, link.fetch (each skip line says why)",
      "not exercised: link.timeout: a pipeline; link.cwd: not provoked",
      `never checked: ${NEVER_CHECKED.join("; ")}`,
    ]);
  });

  it("says only what no check reaches when everything ran in full", () => {
    expect(uncovered([v({}), v({ detail: "done (not exercised: )" })])).toEqual([
      "never checked: human errors; unknown-outcome; a gone for a machine mu did not release, and a gone machine's jobs; a fact left out of up that was meant to be cleared",
    ]);
  });
});

describe("how a failed call reads", () => {
  it("makes each outcome with no evidence of its own", () => {
    expect(pass("p")).toEqual({ result: "pass", detail: "p", evidence: [] });
    expect(skip("s")).toEqual({ result: "skip", detail: "s", evidence: [] });
    expect(fail("f")).toEqual({ result: "fail", detail: "f", evidence: [] });
    expect(fail("f", ["e"])).toEqual({ result: "fail", detail: "f", evidence: ["e"] });
  });

  it("names the error a plugin sent, why no answer came, or mu's own line", () => {
    expect(describeCall(new ErrorReply("link.exec", "retryable", "busy"))).toBe(
      "link.exec answered an error (retryable): busy",
    );
    expect(describeCall(new NoAnswer("link.exec", "deadline", "no answer in 5 s"))).toBe(
      "no answer in 5 s",
    );
    expect(describeCall(new UsageError("x", "usage", "bad flag", { hint: "see --help" }))).toBe(
      "mu: usage: bad flag; see --help",
    );
    expect(describeCall(new Error("plain"))).toBe("plain");
    expect(describeCall("a string")).toBe("a string");
  });

  it("names the method once", () => {
    const err = new ErrorReply("link.exec", "permanent", "no");
    expect(failedCall("link.exec", err)).toBe("link.exec answered an error (permanent): no");
    expect(failedCall("link.exe", err)).toBe(
      "link.exe: link.exec answered an error (permanent): no",
    );
    expect(failedCall("the push", new Error("gone"))).toBe("the push: gone");
  });

  it("passes a call's answer through, and turns its failure into the check's", async () => {
    await expect(must("x", Promise.resolve(7))).resolves.toBe(7);
    const err = await must("the push", Promise.reject(new Error("gone"))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckFailed);
    expect([(err as CheckFailed).detail, (err as CheckFailed).evidence]).toEqual([
      "the push: gone",
      ["gone"],
    ]);
    expect(new CheckFailed("only").evidence).toEqual([]);
  });
});

/** A run context with a clock that moves only when told, and a canary. */
function context(canary = "canary-5ecret-value") {
  let now = 1000;
  const ctx = { canary, io: { ports: { clock: { now: () => now } } } } as unknown as RunContext;
  return { ctx, advance: (ms: number) => (now += ms) };
}

describe("how the suite runs a check", () => {
  it("times it, gives its verdict as it comes, and keeps the canary out", async () => {
    const { ctx, advance } = context();
    const emitted: Verdict[] = [];
    const got = await timed(
      ctx,
      "canary",
      async () => {
        advance(250);
        return {
          result: "fail",
          detail: "saw canary-5ecret-value",
          evidence: ["x canary-5ecret-value y"],
        };
      },
      (x) => emitted.push(x),
    );
    expect(got).toEqual({
      id: "canary",
      result: "fail",
      detail: "saw <canary>",
      evidence: ["x <canary> y"],
      ms: 250,
    });
    expect(emitted).toEqual([got]);
  });

  it("turns a throw into the check's failure, saying what was thrown", async () => {
    const { ctx } = context();
    const broke = await timed(
      ctx,
      "eof",
      () => Promise.reject(new CheckFailed("the promise broke", ["proof"])),
      () => {},
    );
    expect([broke.result, broke.detail, broke.evidence]).toEqual([
      "fail",
      "the promise broke",
      ["proof"],
    ]);
    const crashed = await timed(
      ctx,
      "eof",
      () => Promise.reject(new NoAnswer("link.exec", "exited", "the plugin exited")),
      () => {},
    );
    expect([crashed.result, crashed.detail, crashed.evidence]).toEqual([
      "fail",
      "the check could not run: the plugin exited",
      ["the plugin exited"],
    ]);
  });

  it("runs a list at once, each after those it names, and gives verdicts in the list's order", async () => {
    const { ctx } = context();
    const out: Verdict[] = [];
    const emitted: string[] = [];
    const started: string[] = [];
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    const body =
      (id: string, wait?: Promise<void>): (() => Promise<Outcome>) =>
      async () => {
        started.push(id);
        if (wait) await wait;
        return pass(id);
      };
    const { runTogether } = checkRunner(ctx, out, (x) => emitted.push(x.id));
    const run = runTogether(false, [
      ["link.exec", body("link.exec", firstHeld)],
      ["link.push", body("link.push")],
      ["link.fetch", body("link.fetch"), ["link.exec"]],
    ]);
    await new Promise((r) => setTimeout(r, 10));
    // the second ran while the first was held; the third waits for the first
    expect(started).toEqual(["link.exec", "link.push"]);
    expect(emitted).toEqual([]);
    releaseFirst();
    await run;
    expect(started).toEqual(["link.exec", "link.push", "link.fetch"]);
    expect(emitted).toEqual(["link.exec", "link.push", "link.fetch"]);
    expect(out.map((x) => x.id)).toEqual(emitted);
  });

  it("goes one by one when told to, and `run` adds a single check", async () => {
    const { ctx } = context();
    const out: Verdict[] = [];
    const emitted: string[] = [];
    const log: string[] = [];
    const { run, runTogether } = checkRunner(ctx, out, (x) => emitted.push(x.id));
    const body = (id: string) => async () => {
      log.push(`start ${id}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${id}`);
      return skip(id);
    };
    await runTogether(true, [
      ["link.exec", body("link.exec")],
      ["link.push", body("link.push")],
    ]);
    await run("canary", body("canary"));
    expect(log).toEqual([
      "start link.exec",
      "end link.exec",
      "start link.push",
      "end link.push",
      "start canary",
      "end canary",
    ]);
    expect(out.map((x) => [x.id, x.result])).toEqual([
      ["link.exec", "skip"],
      ["link.push", "skip"],
      ["canary", "skip"],
    ]);
    expect(emitted).toEqual(["link.exec", "link.push", "canary"]);
  });
});

describe("what the suite counts as made", () => {
  const target = { host: { name: "h" }, job: { kind: "k", key: "j1" } };

  it("counts a start before its answer, and takes the handle the answer names", () => {
    const made = nothingMade();
    tally(made, "job.start", { key: "j1", target });
    expect(made.jobs.get("j1")).toEqual({ target, stopped: false });
    expect(made.jobs.get("j1")?.target).not.toBe(target);
    tally(made, "job.start", { key: "j1", target }, { handle: "hd-1" });
    expect(made.jobs.get("j1")).toEqual({
      target: { ...target, job: { ...target.job, handle: "hd-1" } },
      stopped: false,
    });
    expect(target.job).toEqual({ kind: "k", key: "j1" });
  });

  it("marks a job stopped only on a stop answered null, and a start sent again undoes it", () => {
    const made = nothingMade();
    tally(made, "job.start", { key: "j1", target });
    tally(made, "job.stop", { key: "j1" }, { error: 1 });
    expect(made.jobs.get("j1")?.stopped).toBe(false);
    tally(made, "job.stop", { key: "j1" }, null);
    expect(made.jobs.get("j1")?.stopped).toBe(true);
    tally(made, "job.start", { key: "j1", target }, { handle: "h" });
    expect(made.jobs.get("j1")?.stopped).toBe(true);
    expect(made.jobs.get("j1")?.target).toMatchObject({ job: { handle: "h" } });
    tally(made, "job.start", { key: "j1", target });
    expect(made.jobs.get("j1")?.stopped).toBe(false);
    // a start sent again keeps the handle its first answer named
    expect(made.jobs.get("j1")?.target).toMatchObject({ job: { handle: "h" } });
    tally(made, "job.stop", { key: "nope" }, null);
    expect([...made.jobs.keys()]).toEqual(["j1"]);
  });

  it("remembers fenced keys, and ignores calls without a key", () => {
    const made = nothingMade();
    tally(made, "job.lookup", { key: "j1", fence: true });
    tally(made, "job.lookup", { key: "j2", fence: false });
    tally(made, "job.start", { target });
    tally(made, "host.acquire", { key: 5 });
    tally(made, "host.lookup", { key: "h1", fence: true }, null);
    expect([...made.fenced]).toEqual(["j1"]);
    expect(made.jobs.size + made.hosts.size).toBe(0);
  });

  it("follows a machine by its handle, and a new handle for the key is a new machine", () => {
    const made = nothingMade();
    tally(made, "host.acquire", { key: "k" });
    expect(made.hosts.get("k")).toEqual({ released: false });
    tally(made, "host.acquire", { key: "k" }, { handle: "vm-1" });
    expect(made.hosts.get("k")).toEqual({ handle: "vm-1", released: false });
    tally(made, "host.release", { key: "k" }, { not: "null" });
    expect(made.hosts.get("k")?.released).toBe(false);
    tally(made, "host.release", { key: "k" }, null);
    expect(made.hosts.get("k")).toEqual({ handle: "vm-1", released: true });
    tally(made, "host.acquire", { key: "k" }, { handle: "vm-1" });
    expect(made.hosts.get("k")).toEqual({ handle: "vm-1", released: true });
    // an acquire sent again, before its answer, is still that machine
    tally(made, "host.acquire", { key: "k" });
    expect(made.hosts.get("k")).toEqual({ handle: "vm-1", released: true });
    tally(made, "host.acquire", { key: "k" }, { handle: "vm-2" });
    expect(made.hosts.get("k")).toEqual({ handle: "vm-2", released: false });
    tally(made, "host.release", { key: "other" }, null);
    expect([...made.hosts.keys()]).toEqual(["k"]);
  });
});

describe("where the link checks go", () => {
  it("names the suite's own host and the plugin's instance", () => {
    const hello = { instance: "prod-eu" } as InitializeResult;
    expect(profileTarget(hello)).toEqual({ host: { name: CHECK_HOST, instance: "prod-eu" } });
    expect(CHECK_HOST).toBe("mu-check");
  });
});

const enc = (s: string) => new TextEncoder().encode(s);
const reply = (id: number, result: unknown) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`;
const exec = { exitCode: 0, stdout: "", stderr: "", partial: false };
const observation = { status: "idle", settled: true, since: 1, runs: 1, incarnation: 1 };
const settled = (watchId: string) =>
  `${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled", params: { watchId, observation } })}\n`;
const ask = (log: WireLog, id: number, method: string) =>
  log.sent(enc(JSON.stringify({ jsonrpc: "2.0", id, method, params: {} })));

describe("everything a plugin wrote, judged line by line", () => {
  it("takes a reply to a request mu sent, once", () => {
    const log = new WireLog();
    ask(log, 1, "link.exec");
    log.sent(enc("not json"));
    log.sent(enc(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel", params: { id: 1 } })));
    log.received(enc(reply(1, exec)));
    expect([log.problems, log.lines]).toEqual([[], 1]);
    log.received(enc(reply(1, exec)));
    log.received(enc(reply(9, exec)));
    expect(log.problems).toEqual([
      `a second reply to id 1 (link.exec): ${reply(1, exec).trim()}`,
      `a reply to id 9, which mu never sent: ${reply(9, exec).trim()}`,
    ]);
    expect(log.lines).toBe(3);
  });

  it("matches an error reply to its request too, and takes a null result", () => {
    const log = new WireLog();
    const error = (id: number) =>
      `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: 1, message: "m", data: { kind: "permanent" } } })}\n`;
    log.received(enc(error(9)));
    ask(log, 2, "job.stop");
    log.received(enc(reply(2, null)));
    ask(log, 3, "link.exec");
    log.received(enc(error(3)));
    log.received(enc(error(3)));
    expect(log.problems).toEqual([
      `a reply to id 9, which mu never sent: ${error(9).trim()}`,
      `a second reply to id 3 (link.exec): ${error(3).trim()}`,
    ]);
  });

  it("judges a result against its method's schema and quotes the line, clipped", () => {
    const log = new WireLog();
    ask(log, 2, "link.exec");
    const bad = { ...exec, exitCode: "0", pad: "p".repeat(300) };
    log.received(enc(reply(2, bad)));
    expect(log.problems).toHaveLength(1);
    const [problem] = log.problems;
    expect(problem).toMatch(/^link\.exec result: .*must be integer.*: \{"jsonrpc":"2\.0"/);
    expect(problem).toMatch(/… \(\d+ chars\)$/);
    // an error reply is matched to its request too, with no result to judge
    ask(log, 3, "link.exec");
    log.received(
      enc(
        `${JSON.stringify({ jsonrpc: "2.0", id: 3, error: { code: 1, message: "m", data: { kind: "permanent" } } })}\n`,
      ),
    );
    expect(log.problems).toHaveLength(1);
  });

  it("names a line that is no message", () => {
    const log = new WireLog();
    log.received(enc("hello there\n"));
    expect(log.problems).toHaveLength(1);
    expect(log.problems[0]).toMatch(/: hello there$/);
  });

  it("takes one notification for each watch the suite opened, in either order", () => {
    const log = new WireLog();
    ask(log, 1, "channel.watch");
    log.received(enc(reply(1, { watchId: "w1", initial: observation })));
    log.received(enc(settled("w1")));
    // the notification first, then its watch's reply
    log.received(enc(settled("w2")));
    ask(log, 2, "channel.watch");
    log.received(enc(reply(2, { watchId: "w2", initial: observation })));
    log.end();
    expect(log.problems).toEqual([]);
    // a second notification for a watch already ended is unasked
    log.received(enc(settled("w1")));
    log.received(enc(settled("w1")));
    log.end();
    expect(log.problems).toEqual([
      `watch/settled with no watch open: ${settled("w1").trim()}`,
      `a notification with no watch open: ${settled("w1").trim()}`,
    ]);
  });

  it("refuses a notification the schema does not allow, even for a watch that is open", () => {
    const open = new WireLog();
    ask(open, 1, "channel.watch");
    open.received(enc(reply(1, { watchId: "w", initial: observation })));
    open.received(
      enc(
        `${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "w" } })}\n`,
      ),
    );
    open.received(enc(`${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled" })}\n`));
    expect(open.problems).toHaveLength(2);
    expect(open.problems[0]).toMatch(
      /^watch\/settled does not match the schema \(.*observation.*\): \{/,
    );
    expect(open.problems[1]).toBe(
      'watch/settled without params: {"jsonrpc":"2.0","method":"watch/settled"}',
    );
    const log = new WireLog();
    const line = `${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "w" } })}\n`;
    log.received(enc(line));
    expect(log.problems).toHaveLength(1);
    expect(log.problems[0]).toMatch(
      /^watch\/settled does not match the schema \(.*observation.*\): \{/,
    );
  });

  it("a watch's reply that is not channel.watch's opens no watch", () => {
    const log = new WireLog();
    ask(log, 1, "link.exec");
    log.received(enc(reply(1, { ...exec, watchId: "w9" })));
    log.received(enc(settled("w9")));
    log.end();
    expect(log.problems.some((p) => p.startsWith("a notification with no watch open:"))).toBe(true);
  });

  it("shows a line that is not UTF-8 as its bytes, and reads nothing after it", () => {
    const log = new WireLog();
    ask(log, 1, "link.exec");
    log.received(Buffer.from([0x61, 0xc3, 0xa9, 0xff, 0xfe, 0x62, 0x0a]));
    log.received(enc(reply(1, exec)));
    log.end();
    expect(log.problems).toEqual(["a line that is not valid UTF-8: a\u00e9\\xff\\xfeb"]);
    expect(log.lines).toBe(0);
    const one = new WireLog();
    one.received(Buffer.from([0xff, 0x0a]));
    expect(one.problems).toEqual(["a line that is not valid UTF-8: \\xff"]);
  });

  it("shows the start of a flood's first line, and stops there", () => {
    const log = new WireLog();
    // the line grows over two reads, so the framer holds its first part
    log.received(enc("z".repeat(700 * 1024)));
    log.received(enc("z".repeat(700 * 1024)));
    log.end();
    expect(log.problems).toHaveLength(1);
    expect(log.problems[0]).toMatch(/^a line of more than 1 MiB \(\d+ bytes so far\): z{240}$/);
  });

  it("calls a last line without its newline incomplete", () => {
    const log = new WireLog();
    ask(log, 1, "link.exec");
    log.received(enc(reply(1, exec)));
    log.received(enc('{"jsonrpc":'));
    log.end();
    expect(log.problems).toEqual(['a last line with no newline: {"jsonrpc":']);
    const clean = new WireLog();
    clean.received(enc("\n".repeat(0)));
    clean.end();
    expect(clean.problems).toEqual([]);
  });

  it("finds a needle on either stream, line by line", () => {
    const log = new WireLog();
    log.received(enc("a\n"));
    log.received(enc("secret here\nb"));
    log.stderr(enc("warn: secret there\nother\n"));
    expect(log.linesWith("secret")).toEqual([
      { stream: "stdout", line: "secret here" },
      { stream: "stderr", line: "warn: secret there" },
    ]);
    expect(log.linesWith("nothing")).toEqual([]);
  });

  it("keeps the first 8 MiB a stream wrote, no more", () => {
    const log = new WireLog();
    const MiB = 1024 * 1024;
    log.stderr(enc(`${"x".repeat(8 * MiB - 8)}\nfirst\n`));
    log.stderr(enc("late\n"));
    expect(log.linesWith("first")).toEqual([{ stream: "stderr", line: "first" }]);
    // one byte of the late line fits: the cut falls at exactly 8 MiB
    expect(log.linesWith("l")).toEqual([{ stream: "stderr", line: "l" }]);
    expect(log.linesWith("late")).toEqual([]);
  });
});

/** A start's log as the suite keeps it: what its plugin wrote, and who left its group. */
function started(check: string, out: string, err = "", escapees: Escapee[] = [], pgid?: number) {
  const wire = new WireLog();
  ask(wire, 1, "link.exec");
  wire.received(enc(out));
  wire.stderr(enc(err));
  return {
    check,
    mark: "m",
    wire,
    escapees,
    known: new Map(),
    ...(pgid ? { pgid } : {}),
  } as StartLog;
}
const runOf = (logs: StartLog[], more: Partial<RunContext> = {}) =>
  ({ canary: "canary-5ecret-value", logs, ...more }) as RunContext;

describe("the checks judged over every start of the run", () => {
  it("messages: counts lines and starts, and quotes each bad line under its check", () => {
    const good = started("link.exec", reply(1, exec));
    expect(messages(runOf([good]))).toEqual({
      result: "pass",
      detail:
        "1 line from 1 start, each one strict JSON-RPC, UTF-8 and under 1 MiB, answering a request mu sent",
      evidence: [],
    });
    const bad = started("eof", `${reply(1, exec)}${reply(7, exec)}${reply(8, exec)}`);
    expect(messages(runOf([good, bad]))).toEqual({
      result: "fail",
      detail: "2 invalid messages in 4 lines from 2 starts",
      evidence: [
        `[eof] a reply to id 7, which mu never sent: ${reply(7, exec).trim()}`,
        `[eof] a reply to id 8, which mu never sent: ${reply(8, exec).trim()}`,
      ],
    });
    const one = started("eof", reply(5, exec));
    expect(messages(runOf([one])).detail).toBe("1 invalid message in 1 line from 1 start");
  });

  it("canary: shows where the value came back, masked, and centred on it", () => {
    const value = "canary-5ecret-value";
    expect(canary(runOf([started("link.exec", reply(1, exec), "fine\n")]))).toEqual({
      result: "pass",
      detail: "MU_PLUGIN_CANARY never appeared on stdout or stderr in 1 start",
      evidence: [],
    });
    const far = `${"a".repeat(100)}${value}${"b".repeat(100)}`;
    const got = canary(
      runOf([started("link.exec", `x ${value} y\n`, `${far}\n`), started("eof", "", `${value}\n`)]),
    );
    expect(got).toEqual({
      result: "fail",
      detail: "the value of MU_PLUGIN_CANARY came back in 3 lines",
      evidence: [
        "[link.exec] stdout: x <canary> y",
        `[link.exec] stderr: …${"a".repeat(80)}<canary>${"b".repeat(80)}`,
        "[eof] stderr: <canary>",
      ],
    });
    expect(JSON.stringify(got)).not.toContain(value);
    expect(canary(runOf([started("eof", "", `${value}\n`)])).detail).toBe(
      "the value of MU_PLUGIN_CANARY came back in 1 line",
    );
  });

  it("containment: names each process that left the group, and how the run watched", () => {
    const escapee = { pid: 42, pgid: 42, sid: 42, cmdline: "sleep 300", by: "ancestry" };
    expect(
      containment(
        runOf([
          started("link.timeout", "", "", [escapee, { ...escapee, pid: 43, cmdline: "" }], 40),
        ]),
      ),
    ).toEqual({
      result: "fail",
      detail: "2 processes the plugin started left its process group",
      evidence: [
        "[link.timeout] pid 42 (pgid 42, sid 42), not in the plugin's group 40, found by ancestry: sleep 300; killed",
        "[link.timeout] pid 43 (pgid 42, sid 42), not in the plugin's group 40, found by ancestry: (no command line); killed",
      ],
    });
    expect(containment(runOf([started("eof", "", "", [escapee])])).detail).toBe(
      "1 process the plugin started left its process group",
    );
    expect(containment(runOf([started("eof", "", "", [escapee])])).evidence[0]).toContain(
      "not in the plugin's group ?,",
    );
    const launcher = { launch: {}, reports: "/r" } as unknown as RunContext["launcher"];
    expect(containment(runOf([started("a", ""), started("b", "")], { launcher })).detail).toBe(
      "every process started in 2 starts stayed in the plugin's group, watched by environment marker and by ancestry under a child subreaper",
    );
    expect(containment(runOf([started("a", "")], { noLauncher: "no prctl" })).detail).toBe(
      "every process started in 1 start stayed in the plugin's group, watched by environment marker only (no child subreaper: no prctl)",
    );
    expect(containment(runOf([])).detail).toBe(
      "every process started in 0 starts stayed in the plugin's group, watched by environment marker only (no child subreaper: not set up)",
    );
  });
});
