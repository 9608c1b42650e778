import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import {
  checking,
  expectEvidence,
  expectFailed,
  registered as registerFixture,
} from "./fixture-check.js";
import { muBin, mutantEnv } from "./helpers.js";
import { alive } from "./sshd.js";

// `mu plugin check` against a job plugin not built on the sim
// (test/fixtures/job-plugin.mjs): its backend is a directory every process
// shares, it dedupes on the key and every param, and it fences keys. Correct,
// it passes every check it declares; each way it can be broken fails exactly
// the check aimed at it.

const BREAKS = [
  {
    broken: "memory-dedupe",
    fails: "job.replay",
    headline: /the identical job\.start sent to a new process did not return the first reply$/,
  },
  {
    broken: "memory-jobs",
    fails: "job.replay",
    headline: /the identical job\.start sent to a new process did not return the first reply$/,
  },
  {
    broken: "forget-stopped",
    fails: "job.replay",
    headline:
      /^job\.lookup from a new process after the job was stopped answered \{"none":true\}, not found with handle fx-/,
  },
  {
    broken: "stop-in-memory",
    fails: "job.replay",
    headline: /^job\.stop answered null, yet job\.status from a new process reads running$/,
  },
  {
    broken: "ignore-fence",
    fails: "job.replay",
    headline: /^a job\.start after a fenced job\.lookup of its key answered none took effect$/,
  },
  {
    broken: "fence-after-effect",
    fails: "job.replay",
    headline:
      /^a fenced job\.start answered permanent, which says nothing happened, yet job\.lookup then found the job$/,
  },
  {
    broken: "dead-view",
    fails: "job.attach",
    headline:
      /^the view job\.attach answered for a running job ended within 1000 ms \(exit 3\), where a pane must show the job$/,
    evidence: [
      /^view: \{"command":"echo no such job >&2; exit 3","env":\{\}\}$/,
      /^stderr: no such job$/,
    ],
  },
  {
    broken: "slow-steps",
    fails: "job.checkSteps",
    headline: /^job\.checkSteps \(agent\): job\.checkSteps had no answer within 10000 ms$/,
    evidence: [/^job\.checkSteps had no answer within 10000 ms$/],
  },
  {
    broken: "ignore-cwd",
    fails: "job.spec",
    headline:
      /^the job's command reported cwd and MU_CHECK_SPEC as '\/\S+ [0-9a-f]{16}', not '\/ [0-9a-f]{16}'$/,
    evidence: [
      /^command: printf 'mu-check-spec %s %s\\n' "\$\(pwd\)" "\$\{MU_CHECK_SPEC:-unset\}"; exec sleep 600$/,
      /^view: \{"command":"exec tail -n \+1 -f '[^']+'","env":\{\}\}$/,
      /^view printed: job fx-\w+ \| mu-check-spec \S+ [0-9a-f]{16}$/,
    ],
  },
  {
    broken: "drop-env",
    fails: "job.spec",
    headline:
      /^the job's command reported cwd and MU_CHECK_SPEC as '\/ unset', not '\/ [0-9a-f]{16}'$/,
    evidence: [
      /^command: printf 'mu-check-spec %s %s\\n' "\$\(pwd\)" "\$\{MU_CHECK_SPEC:-unset\}"; exec sleep 600$/,
      /^view: \{"command":"exec tail -n \+1 -f '[^']+'","env":\{\}\}$/,
      /^view printed: job fx-\w+ \| mu-check-spec \/ unset$/,
    ],
  },
  {
    broken: "ignore-command",
    fails: "job.spec",
    headline:
      /^the job's view showed no line from its command within 10 s: the command was not run, or not where its view shows$/,
    evidence: [
      /^command: printf 'mu-check-spec %s %s\\n' "\$\(pwd\)" "\$\{MU_CHECK_SPEC:-unset\}"; exec sleep 600$/,
      /^view: \{"command":"exec tail -n \+1 -f '[^']+'","env":\{\}\}$/,
      /^view printed: job fx-\w+$/,
    ],
  },
  {
    // The expected value is in the line, with more after it: not the value sent.
    broken: "append-env",
    fails: "job.spec",
    headline:
      /^the job's command reported cwd and MU_CHECK_SPEC as '\/ ([0-9a-f]{16}):\/x', not '\/ \1'$/,
  },
  {
    broken: "blind-view",
    fails: "job.spec",
    headline:
      /^the job's view showed no line from its command within 10 s: the command was not run, or not where its view shows$/,
    evidence: [
      /^command: printf 'mu-check-spec %s %s\\n' "\$\(pwd\)" "\$\{MU_CHECK_SPEC:-unset\}"; exec sleep 600$/,
      /^view: \{"command":"exec sleep 600","env":\{\}\}$/,
      /^view printed: nothing$/,
    ],
  },
  {
    broken: "late-start",
    fails: "job.inflight",
    headline:
      /^inFlightMs is 1000, yet a job\.lookup sent \d+ ms after the start was sent answered none, and the job was found at \d+ ms$/,
  },
  {
    broken: "random-instance",
    fails: "handshake",
    headline: /^the two starts named different instances \(fx-\w+, then fx-\w+\)/,
  },
] as const;

/** What the fixture cannot do: it declares the job seam only. */
const NOT_DECLARED = [
  "link.exec",
  "link.push",
  "link.fetch",
  "link.timeout",
  "link.cwd",
  "link.script-size",
  "link.output",
  "link.git-timeout",
  "host.lifecycle",
  "host.idempotency",
  "host.replay",
  "host.gone",
  "host.facts",
  "host.errors",
  "host.inflight",
  "channel.lifecycle",
  "channel.turns",
  "channel.dedupe",
  "channel.receipts",
  "channel.watch",
  "channel.controls",
];

const CHECK = ["plugin", "check", "jfx", "--seam", "job", "--repeat", "2"];

/** The fixture installed as mu-plugin-jfx and registered, broken as asked. */
const registered = (broken?: string, args: string[] = []) =>
  registerFixture("job-plugin.mjs", "jfx", broken, args);

/**
 * job.spec stops its own job, pass or fail, from the process that started
 * it: not left running for the suite's clean-up at the end, which stops it
 * from a start of its own. The fixture's record of the one job started with
 * a command says which processes started and stopped it.
 */
function expectSpecJobStoppedByItsCheck(home: string): void {
  const jobs = readdirSync(join(home, "jobs"))
    .filter((f) => !f.endsWith(".tmp"))
    .map((f) => JSON.parse(readFileSync(join(home, "jobs", f), "utf8")));
  const spec = jobs.filter((j) => j.command);
  expect(spec, JSON.stringify(jobs)).toHaveLength(1);
  expect(spec[0]).toMatchObject({ state: "ended", stoppedBy: spec[0].startedBy });
}

describe.concurrent("mu plugin check on a stand-alone job plugin", () => {
  it("the correct plugin, deduping on the key and every param, passes every check it declares", async () => {
    const w = await registered();
    try {
      const r = await checking(CHECK, w.env);
      expect(r.stderr).toBe("");
      expect(r.code, r.stdout).toBe(0);
      const got = r.got;
      expect(Object.keys(got)).toEqual([...CHECK_IDS]);
      for (const id of CHECK_IDS)
        expect([id, got[id]?.mark]).toEqual([id, NOT_DECLARED.includes(id) ? "skip" : "ok"]);
      expect(got["job.idempotency"]?.detail).toMatch(
        /a repeat inside the 600000 ms window returns the first reply/,
      );
      expect(got["job.replay"]?.detail).toMatch(
        /the identical start returned the first reply; lookup found it running and stopped; a start after a fenced none was refused \(permanent\) and made nothing$/,
      );
      expect(got["job.attach"]?.detail).toMatch(
        /^job\.attach of a running job answered a view that runs \(exec tail -n \+1 -f '.+\)$/,
      );
      expect(got["job.checkSteps"]?.detail).toMatch(
        /^job\.checkSteps answered within 10 s \(agent: 0 steps in \d+ ms\)$/,
      );
      expect(got["job.spec"]?.detail).toBe(
        "a job started with a command of the check's ran it in cwd / with MU_CHECK_SPEC as set in env, as its view shows",
      );
      expectSpecJobStoppedByItsCheck(w.home);
      // Killed in flight, the start still lands, and its repeat finds it.
      expect(got["job.inflight"]?.detail).toMatch(
        /^the start's process SIGKILLed at \+\d+ ms; another process's lookups answered none (once|\d+ times) inside the declared inFlightMs 10000, then found it at \+\d+ ms; the identical start from a new process returned the job found$/,
      );
    } finally {
      w.done();
    }
  }, 120_000);

  it.each(BREAKS)(
    "$broken fails exactly $fails",
    async (b) => {
      const w = await registered(b.broken);
      try {
        const r = await checking(CHECK, w.env);
        expectFailed(r, "jfx", [b.fails], b.headline);
        if ("evidence" in b) {
          expectEvidence(r.stdout, b.fails, b.evidence);
        }
        if (b.fails === "job.spec") expectSpecJobStoppedByItsCheck(w.home);
      } finally {
        w.done();
      }
    },
    120_000,
  );

  // What job.spec asks for follows what the kind declares it honours.
  // Its views end their lines with CR LF, as a pane does: the line is still whole.
  it("a kind that honours a command but not env: job.spec sends no env and wants MU_CHECK_SPEC unset, read through a CR LF view", async () => {
    const w = await registered(undefined, ["--honours", "command", "--crlf-view"]);
    try {
      const r = await checking(CHECK, w.env);
      expect(r.code, r.stdout).toBe(0);
      expect(r.got["job.spec"]).toEqual({
        mark: "ok",
        detail: "a job started with a command of the check's ran it in cwd /, as its view shows",
      });
    } finally {
      w.done();
    }
  }, 120_000);

  it("the same kind running a command elsewhere: the headline names '/ unset' as wanted", async () => {
    const w = await registered("ignore-cwd", ["--honours", "command"]);
    try {
      const r = await checking(CHECK, w.env);
      expectFailed(
        r,
        "jfx",
        ["job.spec"],
        /^the job's command reported cwd and MU_CHECK_SPEC as '\/\S+ unset', not '\/ unset'$/,
      );
      expectSpecJobStoppedByItsCheck(w.home);
    } finally {
      w.done();
    }
  }, 120_000);

  it("a kind that declares no honours (env alone): job.spec is skipped, saying why", async () => {
    const w = await registered(undefined, ["--honours", "absent"]);
    try {
      const r = await checking(CHECK, w.env);
      expect(r.code, r.stdout).toBe(0);
      expect(r.got["job.spec"]).toEqual({
        mark: "skip",
        detail:
          "the kind does not honour a command (honours.command), so no job of the check's can report its cwd and environment",
      });
    } finally {
      w.done();
    }
  }, 120_000);
});

/** Pids of `parent`'s children whose command line starts with `name`. */
function childrenNamed(parent: number, name: string): number[] {
  const r = spawnSync("pgrep", ["-P", String(parent), "-a"], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .map((l) => l.split(" "))
    .filter(([, cmd]) => cmd === name)
    .map(([pid]) => Number(pid));
}

describe("mu plugin check cut short by a signal", () => {
  // A view is mu's own child in a group of its own, so the plugins' stop
  // sequence does not reach it: mu must end it itself, or a `tail -f` on the
  // job's output runs on after the check.
  it("SIGTERM while job.spec watches a job's view: mu dies by it, and the view goes with it", async () => {
    // The command is never run, so job.spec watches the view for its full 10 s.
    const w = await registered("ignore-command");
    let views: number[] = [];
    try {
      const child = spawn(process.execPath, [muBin, ...CHECK], {
        env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...w.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (b: Buffer) => {
        stderr += b.toString();
      });
      const exited = new Promise<[number | null, string | null]>((res) =>
        child.on("exit", (c, s) => res([c, s])),
      );
      // job.attach's view runs a second, job.spec's up to ten: either will do.
      for (let i = 0; i < 1200 && views.length === 0; i++) {
        views = childrenNamed(child.pid as number, "tail");
        if (views.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(views, "no view ran under mu").not.toHaveLength(0);
      child.kill("SIGTERM");
      expect(await exited).toEqual([null, "SIGTERM"]);
      expect(stderr).toMatch(
        /^mu: interrupted: mu plugin check stopped by SIGTERM \(its plugins were stopped first\); nothing was recorded; a job, machine or directory it made \(named mu-check-\*\) may be left on the plugin's backend; run it again\n$/,
      );
      // Killed before mu raised the signal; only the reaping is left to init.
      for (let i = 0; i < 100 && views.some(alive); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(views.filter(alive), "a view outlived mu").toEqual([]);
    } finally {
      for (const pid of views.filter(alive)) process.kill(pid, "SIGKILL");
      w.done();
    }
  }, 120_000);
});
