import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import { packageRoot } from "../host/package-root.js";
import { checking, expectFailed, registered as registerFixture } from "./fixture-check.js";
import { mu, muBin, muChild, mutantEnv } from "./helpers.js";

// `mu plugin check` against plugins not built on the sim: a small link
// plugin written from the spec (test/fixtures/link-plugin.mjs) passes every
// check it declares, and each way it can be broken fails exactly the check
// aimed at it.

const BREAKS = [
  {
    broken: "do-nothing",
    fails: ["link.exec"],
    headline: /came back with exitCode 0 and no output/,
  },
  {
    broken: "fake-push",
    fails: ["link.push"],
    headline:
      /^link\.push answered exitCode 0, yet the remote repository does not hold [0-9a-f]{40}$/,
  },
  {
    // The push check fetches its commit back, so a fake fetch fails both.
    broken: "fake-fetch",
    fails: ["link.push", "link.fetch"],
    headline:
      /link\.fetch of .* answered exitCode 0 but left no FETCH_HEAD in the local repository$/,
  },
  {
    broken: "shell-only-kill",
    fails: ["link.timeout"],
    headline:
      /^remoteOnTimeout is 'stopped', yet a background job, a pipeline member, a process in a session of its own, a process with a cleared environment the script started went on running after the answer$/,
  },
  {
    broken: "blank-env-escapee",
    fails: ["containment"],
    headline: /left its process group/,
    evidence:
      /\(pgid \d+, sid \d+\), not in the plugin's group \d+, found by ancestry: sleep 300; killed/,
  },
  {
    broken: "unknown-host",
    fails: ["link.exec"],
    headline: /^link\.exec answered an error \(retryable\): unknown host mu-check$/,
    evidence:
      /\n {8}link\.exec answered an error \(retryable\): unknown host mu-check\n {8}the suite named the host 'mu-check': a link that reaches only hosts it knows needs --host <profile>\n/,
  },
  {
    broken: "ignore-cwd",
    fails: ["link.cwd"],
    headline:
      /^a script sent with the relative cwd '\.mu-check-[0-9a-f-]+cwd\/rel' ran in '.*\/mu-check', not in /,
  },
  {
    broken: "ignore-abs-cwd",
    fails: ["link.cwd"],
    headline:
      /^a script sent with the absolute cwd '(\/\S+\/abs)' ran in '.*\/mu-check', not in '\1'$/,
  },
  {
    broken: "refuse-cwd",
    fails: ["link.cwd"],
    headline:
      /^in cwd '\.mu-check-[0-9a-f-]+cwd\/rel': link\.exec answered an error \(permanent\): no directory \.mu-check-[0-9a-f-]+cwd\/rel$/,
  },
  {
    broken: "cwd-exit-1",
    fails: ["link.cwd"],
    headline:
      /^a script sent with the relative cwd '\.mu-check-[0-9a-f-]+cwd\/rel' \(a directory that exists\) answered exitCode 1$/,
  },
  {
    broken: "timeout-error",
    fails: ["link.timeout"],
    headline:
      /^a script that outlives timeoutMs \d+: link\.exec answered an error \(retryable\): timed out after \d+ ms$/,
  },
  {
    broken: "timeout-exit-1",
    fails: ["link.timeout"],
    headline:
      /^a script past timeoutMs \d+ was answered with exitCode 1 after \d+ ms, not exitCode null$/,
  },
  {
    broken: "exit-zero",
    fails: ["link.exec"],
    headline: /^a script that exits 37 came back with exitCode 0$/,
    evidence:
      /\n {8}\{"exitCode":0,"partial":false,"stderr":"mu-check -?\d+\\n","stdout":"mu-check \d+\\n"\}\n/,
  },
  {
    broken: "drop-stderr",
    fails: ["link.exec"],
    headline: /^stderr came back without the line "mu-check -?\d+"$/,
    evidence: /\n {8}\{"exitCode":37,"partial":false,"stderr":"","stdout":"mu-check \d+\\n"\}\n/,
  },
  {
    broken: "trim-stdout",
    fails: ["link.exec"],
    headline: /^stdout came back as "mu-check \d+", not the "mu-check \d+\\n" the script printed$/,
    evidence:
      /\n {8}\{"exitCode":37,"partial":false,"stderr":"mu-check -?\d+\\n","stdout":"mu-check \d+"\}\n/,
  },
  {
    broken: "always-partial",
    fails: ["link.exec"],
    headline: /^a few bytes of output came back partial$/,
    evidence: /\n {8}\{"exitCode":37,"partial":true,/,
  },
  {
    broken: "fresh-cwd",
    fails: ["link.exec"],
    headline: /^a file one script wrote in cwd '\.' was not there for the next script in cwd '\.'$/,
    evidence:
      /\n {8}\{"exitCode":1,"partial":false,"stderr":"cat: \.mu-check-\S+\/nonce: No such file or directory\\n","stdout":""\}\n/,
  },
  {
    broken: "cut-at-max",
    fails: ["link.script-size"],
    headline:
      /^a script of exactly maxScriptBytes \(131072 bytes\) did not arrive as sent: the cksum of its here-document came back as '\d+ 13\d{4}', not '\d+ 13\d{4}'$/,
  },
  {
    broken: "cut-over-max",
    fails: ["link.script-size"],
    headline:
      /^a script one byte over maxScriptBytes was neither refused nor run as sent \(exitCode 0\)$/,
  },
  {
    broken: "script-argv",
    fails: ["link.script-size"],
    headline: /^link\.exec answered an error \(permanent\): spawn E2BIG$/,
  },
  {
    broken: "cut-64k",
    fails: ["link.output"],
    headline: /^204800 bytes of output came back cut to 65536 bytes with partial: false$/,
  },
  {
    // A reply line over 1 MiB is also a message no host can read.
    broken: "never-cut",
    fails: ["link.output", "messages"],
    headline: /invalid message/,
    evidence: /\[link\.output\] a line of more than 1 MiB \(\d+ bytes so far\)/,
  },
  {
    broken: "raw-bytes",
    fails: ["link.output", "messages"],
    headline: /invalid message/,
    evidence: /\[link\.output\] a line that is not valid UTF-8: .*mu-check \\xff\\xfe \\xc3 end/,
  },
  {
    broken: "cut-at-bad-byte",
    fails: ["link.output"],
    headline: /^output holding bytes that are not UTF-8 did not come back around them$/,
  },
  {
    broken: "partial-whole",
    fails: ["link.output"],
    headline: /^204800 bytes of output came back whole with partial: true$/,
  },
  {
    broken: "garbled-output",
    fails: ["link.output"],
    headline: /^204800 bytes of output came back as other bytes than the script printed$/,
  },
  {
    broken: "late-kill",
    fails: ["link.timeout"],
    headline:
      /^remoteOnTimeout is 'stopped', yet a background job, a pipeline member, a process in a session of its own, a process with a cleared environment the script started went on running after the answer$/,
  },
  {
    broken: "setsid-scripts",
    fails: ["containment"],
    headline: /left its process group/,
    // Every script runs in a session of its own, so the first process the
    // sweep meets depends on timing: a script's sleep, its shell, or one
    // caught between its setsid and its exec (still the plugin's command
    // line). Any of them, outside the group and killed, is the evidence.
    evidence:
      /\[containment\] pid \d+ \(pgid \d+, sid \d+\), not in the plugin's group \d+, found by marker and ancestry: \S.*; killed/,
  },
  {
    broken: "progress",
    fails: ["messages"],
    headline: /^\d+ invalid messages? in /,
    evidence: /notification '\$\/progress' is not watch\/settled or watch\/restarted/,
  },
  {
    broken: "serial",
    fails: ["eof"],
    headline:
      /^the plugin did not exit within the grace once told to stop \(the later checks kill each of their starts as soon as they stop it, not waiting the grace out\)$/,
    evidence: /after \$\/cancel, shutdown and EOF the group \(\d+\) still ran 5000 ms later/,
  },
  {
    broken: "push-once",
    fails: ["link.push"],
    headline:
      /^link\.push of a second, newer commit to the existing repository answered exitCode 0, yet the remote does not hold [0-9a-f]{40}$/,
  },
  {
    broken: "stale-fetch",
    fails: ["link.fetch"],
    headline:
      /^after link\.fetch of the same repository after a new commit, FETCH_HEAD names [0-9a-f]{40}, not [0-9a-f]{40}$/,
  },
  {
    broken: "fetch-first-branch",
    fails: ["link.fetch"],
    headline:
      /^after link\.fetch of the same repository with HEAD on another branch, FETCH_HEAD names [0-9a-f]{40}, not [0-9a-f]{40}$/,
  },
  {
    broken: "git-no-timeout",
    fails: ["link.git-timeout"],
    headline:
      /^link\.fetch of a repository that never answers, under timeoutMs 2000: link\.fetch had no answer within 7000 ms/,
  },
] as const;

/** What the fixture cannot do: it declares the link seam only. */
const NOT_DECLARED: string[] = CHECK_IDS.filter((id) => /^(host|job|channel)\./.test(id));

const run = muChild;

/** Pids of the processes whose working directory is `dir`. */
function runningIn(dir: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === dir;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * What link.timeout's script started on the remote ends, and leaves no
 * marker behind, even where the plugin let it run on: once nothing runs in
 * the login directory any more, no marker is there.
 */
async function expectTimeoutScriptGone(home: string): Promise<void> {
  const login = join(home, "mu-check");
  for (let i = 0; i < 600 && runningIn(login).length > 0; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(runningIn(login)).toEqual([]);
  expect(readdirSync(login).filter((f) => f.includes(".late-"))).toEqual([]);
}

/** The fixture installed as mu-plugin-brk and registered, broken as asked. */
const registered = (broken?: string, args: string[] = []) =>
  registerFixture("link-plugin.mjs", "brk", broken, ["--hosts", "box", ...args]);

describe.concurrent("mu plugin check on a stand-alone link plugin", () => {
  it("the correct plugin passes every check it declares", async () => {
    const w = await registered();
    try {
      const r = await checking(["plugin", "check", "brk"], w.env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const got = r.got;
      expect(Object.keys(got)).toEqual([...CHECK_IDS]);
      for (const id of CHECK_IDS)
        expect([id, got[id]?.mark]).toEqual([id, NOT_DECLARED.includes(id) ? "skip" : "ok"]);
      expect(got.containment?.detail).toMatch(/by ancestry under a child subreaper/);
      // Each passing line says what it exercised, with the sizes and limits it used.
      const on = "on host mu-check: ";
      expect(got["link.exec"]?.detail).toMatch(
        new RegExp(
          `^${on}stdout, stderr and exit code 37 came back exactly, and cwd '\\.' is the same directory from one script to the next \\(\\d+ ms there and back\\)$`,
        ),
      );
      expect(got["link.push"]?.detail).toBe(
        `${on}the remote holds the pushed commit, a second push succeeded, a newer commit pushed to it arrived, and a fetch brought it back`,
      );
      expect(got["link.fetch"]?.detail).toBe(
        `${on}FETCH_HEAD names the HEAD of a fresh repository, again after a new commit, and with HEAD on another branch`,
      );
      // The limit scales with link.exec's round trip: here far below its 15 s cap.
      expect(got["link.timeout"]?.detail).toMatch(
        new RegExp(
          `^${on}answered exitCode null after \\d+ ms \\(timeoutMs (\\d{4}|1[0-4]\\d{3})\\); none of its background job, pipeline member, own-session and blank-environment processes ran on \\(stopped\\)$`,
        ),
      );
      expect(got["link.cwd"]?.detail).toBe(
        `${on}a script ran in the directory its cwd named, relative to the login directory and absolute`,
      );
      expect(got["link.script-size"]?.detail).toBe(
        `${on}a script of exactly 131072 bytes ran byte for byte; one byte more ran whole too`,
      );
      expect(got["link.output"]?.detail).toBe(
        `${on}204800 bytes whole, 2176000 bytes cut to 262144 (partial); bytes that are not UTF-8 came back as valid UTF-8`,
      );
      // Every check removed its scratch directory from the login directory.
      expect(
        readdirSync(join(w.home, "mu-check")).filter((f) => f.startsWith(".mu-check-")),
      ).toEqual([]);
      expect(got["link.git-timeout"]?.detail).toMatch(
        new RegExp(
          `^${on}against a repository that never answers, under timeoutMs 2000, link\\.fetch after \\d+ ms and link\\.push after \\d+ ms answered in time$`,
        ),
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
        const r = await checking(["plugin", "check", "brk"], w.env);
        expectFailed(r, "brk", b.fails, b.headline);
        if ("evidence" in b) expect(r.stdout).toMatch(b.evidence);
        if ((b.fails as readonly string[]).includes("link.timeout"))
          await expectTimeoutScriptGone(w.home);
      } finally {
        w.done();
      }
    },
    120_000,
  );

  // One byte over maxScriptBytes may be refused; a maxScriptBytes no request
  // line can carry is never sent, so not tried.
  it.each([
    [
      ["--refuse-over-max"],
      /^on host mu-check: a script of exactly 131072 bytes ran byte for byte; one byte more was refused \(link\.exec answered an error \(permanent\): a script over 131072 bytes\)$/,
    ],
    [
      ["--max-script", "2000000"],
      /^maxScriptBytes 2000000: a script that long cannot fit a 1 MiB request line, so mu never sends one; not tried$/,
    ],
  ])(
    "link.script-size passes a plugin run with %j, saying so",
    async (args, detail) => {
      const w = await registered(undefined, args);
      try {
        const r = await checking(["plugin", "check", "brk"], w.env);
        expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
        expect(r.got["link.script-size"]?.detail).toMatch(detail);
      } finally {
        w.done();
      }
    },
    120_000,
  );

  // "unknown" promises nothing after a timeout, so what the script started
  // runs on by the plugin's leave: the check passes, and stops it itself.
  // "stopping" gives the remote side the grace to end: a tree killed 2.5 s
  // after the answer is within it.
  it("remoteOnTimeout stopping: link.timeout passes a plugin that kills the tree 2.5 s after answering", async () => {
    const w = await registered("late-kill", ["--on-timeout", "stopping"]);
    try {
      const r = await checking(["plugin", "check", "brk"], w.env);
      expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
      expect(r.got["link.timeout"]?.detail).toMatch(
        /^on host mu-check: answered exitCode null after \d+ ms \(timeoutMs \d+\); none of its background job, pipeline member, own-session and blank-environment processes ran on \(stopping\)$/,
      );
      await expectTimeoutScriptGone(w.home);
    } finally {
      w.done();
    }
  }, 120_000);

  it("remoteOnTimeout unknown: link.timeout passes a plugin that kills only the shell, and nothing of the script stays", async () => {
    const w = await registered("shell-only-kill", ["--on-timeout", "unknown"]);
    try {
      const r = await checking(["plugin", "check", "brk"], w.env);
      expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
      expect(r.got["link.timeout"]?.detail).toMatch(
        /^on host mu-check: answered exitCode null after \d+ ms \(timeoutMs \d+\); remoteOnTimeout unknown promises nothing after that$/,
      );
      await expectTimeoutScriptGone(w.home);
    } finally {
      w.done();
    }
  }, 120_000);

  it("--host runs the link checks on a registered profile, reading its --repo, and changes no profile", async () => {
    const w = await registered("unknown-host");
    try {
      const repo = join(w.home, "box", "repo");
      mkdirSync(repo, { recursive: true });
      const git = (...a: string[]) =>
        spawnSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...a]);
      git("init", "--quiet");
      git("commit", "--quiet", "--allow-empty", "-m", "seed");
      expect(
        (await mu(["host", "add", "box", "--plugin", "brk", "--repo", "repo"], w.env)).code,
      ).toBe(0);
      const before = await mu(["host", "list", "--json"], w.env);
      const r = await checking(["plugin", "check", "brk", "--host", "box"], w.env);
      expect(r.stderr).toBe("");
      expect(r.code, r.stdout).toBe(0);
      const got = r.got;
      for (const id of ["link.exec", "link.push", "link.fetch", "link.timeout"])
        expect([id, got[id]?.mark]).toEqual([id, "ok"]);
      expect(got["link.exec"]?.detail).toMatch(/^on host box: /);
      expect(got["link.fetch"]?.detail).toBe(
        "on host box: FETCH_HEAD names the HEAD of the profile's repository repo, and of a fresh repository, again after a new commit, and with HEAD on another branch",
      );
      expect((await mu(["host", "list", "--json"], w.env)).stdout).toBe(before.stdout);
    } finally {
      w.done();
    }
  }, 120_000);
});

describe("mu plugin check --host and --help", () => {
  it("a host mu does not know is not found (exit 3); another plugin's host is a usage error", async () => {
    const w = await registered();
    try {
      const none = await mu(["plugin", "check", "brk", "--host", "nope"], w.env);
      expect(none.code).toBe(3);
      expect(none.stderr).toMatch(/^mu: host: no host named 'nope'; /);
      const exe = join(w.home, "mu-plugin-oth");
      copyFileSync(join(packageRoot(), "test/fixtures/link-plugin.mjs"), exe);
      chmodSync(exe, 0o755);
      const schema = join(packageRoot(), "schemas/plugin-protocol-v1.json");
      const home = ["--home", w.home];
      expect(
        (await mu(["plugin", "add", "oth", "--", exe, "--schema", schema, ...home], w.env)).code,
      ).toBe(0);
      expect((await mu(["host", "add", "obox", "--plugin", "oth"], w.env)).code).toBe(0);
      const other = await mu(["plugin", "check", "brk", "--host", "obox"], w.env);
      expect(other.code).toBe(2);
      expect(other.stderr).toMatch(
        /^mu: usage: host 'obox' is reached through plugin 'oth', not 'brk'; name a host of 'brk' /,
      );
    } finally {
      w.done();
    }
  });

  it("mu's own runs start the plugin as mu's child, with no launcher", async () => {
    const w = await registered();
    try {
      expect((await mu(["host", "add", "box", "--plugin", "brk"], w.env)).code).toBe(0);
      // The script's parent is the plugin; the plugin's parent must be mu itself.
      const script = `tr '\\0' ' ' < /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/cmdline`;
      const r = await run(["host", "exec", "box", "--", script], w.env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(muBin);
      expect(r.stdout).not.toMatch(/prctl|python/);
    } finally {
      w.done();
    }
  });

  it("--help names all four seams and what --param is for", async () => {
    const r = await mu(["plugin", "check", "--help"], {});
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\s+/g, " ");
    expect(text).toContain("this seam: host, job or channel (link is accepted");
    expect(text).toContain("host.acquire's params, and harness and cmd for job.start");
    expect(r.stdout).toMatch(/--host <name>/);
  });
});

describe("mu plugin check cut short by a signal", () => {
  // The git checks push from and fetch into local repositories of the
  // check's own. mu raises the signal only once its plugins are stopped, and
  // by then each check's call has failed and its finally has removed them.
  it("SIGTERM while a git check holds a local repository: mu dies by it, and its temp directories go", async () => {
    const w = await registered();
    // mu's own temp directory, so that what this run leaves is all there is.
    const tmp = mkdtempSync(join(tmpdir(), "mu-check-tmp-"));
    try {
      const child = spawn(process.execPath, [muBin, "plugin", "check", "brk"], {
        env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...w.env, TMPDIR: tmp },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (b: Buffer) => {
        stderr += b.toString();
      });
      const exited = new Promise<[number | null, string | null]>((res) =>
        child.on("exit", (c, s) => res([c, s])),
      );
      const repos = () => readdirSync(tmp).filter((d) => existsSync(join(tmp, d, ".git")));
      // link.git-timeout holds its repository 2 s at least, the push and fetch checks less.
      for (let i = 0; i < 1500 && repos().length === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(repos(), "no local repository seen").not.toHaveLength(0);
      child.kill("SIGTERM");
      expect(await exited).toEqual([null, "SIGTERM"]);
      expect(stderr).toMatch(/^mu: interrupted: mu plugin check stopped by SIGTERM /);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      w.done();
    }
  }, 120_000);
});
