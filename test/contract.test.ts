import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckId, Verdict } from "../host/contract/verdict.js";
import { CHECK_IDS } from "../host/contract/verdict.js";
import { packageRoot } from "../host/package-root.js";
import type { Fault } from "../sim/plugin/fault-types.js";
import { World, type WorldConfig } from "../sim/plugin/world.js";
import { mu, muBin, muChild, mutantEnv, tempState } from "./helpers.js";

// The contract suite tested against the real sim plugin: correct, it passes
// every check; each broken variant fails exactly the check aimed at it.

/** The variant table, also in docs/plugin-check.md. */
const VARIANTS: { variant: string; faults: Fault[]; fails: CheckId[]; headline?: RegExp }[] = [
  {
    variant: "leaks the canary to stderr",
    faults: [{ on: "initialize", times: "always", do: { leakCanary: "stderr" } }],
    fails: ["canary"],
  },
  {
    variant: "leaks the canary in a reply",
    faults: [{ on: "link.checkSteps", times: "always", do: { leakCanary: "reply" } }],
    fails: ["canary"],
  },
  {
    variant: "escapes its group with setsid",
    faults: [{ on: "initialize", times: "always", do: { setsidHelper: true } }],
    fails: ["containment"],
  },
  {
    variant: "ignores EOF (and shutdown)",
    faults: [{ on: "initialize", times: "always", do: { ignoreEof: true } }],
    fails: ["eof"],
  },
  {
    variant: "a second release of a released host errors",
    faults: [{ on: "host.release", times: "always", do: { releaseErrorsWhenGone: true } }],
    // The replay check's second release, from a new process, meets it too.
    fails: ["host.idempotency", "host.replay"],
    headline:
      /: a second host\.release of the released host: host\.release answered an error \(\w[\w-]*\): /,
  },
  {
    variant: "a release of a host another process acquired errors",
    faults: [{ on: "host.release", times: "always", do: { releaseOnlyOwn: true } }],
    fails: ["host.replay"],
    headline:
      /^FAIL {2}host\.replay {7}host\.release from a new process that never acquired the host: host\.release answered an error \(permanent\): /,
  },
  {
    variant: "an acquire that ignores a fenced lookup's none",
    faults: [{ on: "host.acquire", times: "always", do: { acquireIgnoresFence: true } }],
    fails: ["host.replay"],
    headline:
      /^FAIL {2}host\.replay {7}a host\.acquire after a fenced host\.lookup of its key answered none took effect$/,
  },
  {
    variant: "link.exec does not enforce timeoutMs",
    faults: [{ on: "link.exec", times: "always", do: { execIgnoresTimeout: true } }],
    fails: ["link.timeout"],
  },
  {
    variant: "a lookup that answers none for a started job",
    faults: [{ on: "job.lookup", times: "always", do: { reply: { none: true } } }],
    fails: ["job.idempotency", "job.replay"],
    headline: /: job\.lookup of a started job answered \{"none":true\}, not found$/,
  },
  {
    variant: "a receipt that echoes another msgId",
    faults: [
      {
        on: "channel.receipt",
        times: "always",
        do: { reply: { state: "accepted", id: "msg-someone-else" } },
      },
    ],
    // A receipt for a msgId never sent meets it too.
    fails: ["channel.lifecycle", "channel.receipts"],
    headline: /answered state accepted for msgId msg-someone-else, not accepted for /,
  },
  {
    variant: "an unknown field in a reply",
    faults: [{ on: "link.checkSteps", times: "always", do: { invalid: "unknown-field" } }],
    fails: ["messages"],
  },
];

/** A provider whose acquire and start declare both lookup and exact dedupe, so every path runs. */
const CORRECT: WorldConfig = {
  preset: "provider-full",
  instance: "sim-1",
  hello: {
    seams: {
      host: { acquire: { dedupe: { exact: true, windowMs: 600_000 } } },
      job: { start: { dedupe: { exact: true, windowMs: 600_000 } } },
    },
  },
};

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");

/** The sim's jobs are records that run no command, so it honours none: job.spec skips, saying so. */
const SKIPS: CheckId[] = ["job.spec"];
const CHECK = [
  "plugin",
  "check",
  "sim",
  ...["--seam", "host", "--seam", "job", "--seam", "channel"],
  ...["--param", "size=small", "--repeat", "3"],
];

const run = muChild;

/** A world and a state dir with the sim registered; faults are set after `add`, so add stays clean. */
async function registered(faults: Fault[] = []) {
  // Named so the suite's teardown finds any sim this test leaves running.
  const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
  const state = tempState();
  const world = World.create(join(dir, "world"), CORRECT);
  const add = await run(["plugin", "add", "sim", "--", sim, "--world", world.dir], state.env);
  expect(add.stderr).toBe("");
  world.setConfig({ ...CORRECT, faults });
  return {
    dir,
    env: state.env,
    done() {
      state.done();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const LINE = /^(ok {2}|FAIL|skip) {2}(\S+) /;

function results(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of stdout.split("\n")) {
    const m = LINE.exec(l);
    if (m?.[1] && m[2]) out[m[2]] = m[1].trim();
  }
  return out;
}

describe("mu plugin check on the correct sim", () => {
  let w: Awaited<ReturnType<typeof registered>>;
  let r: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    w = await registered();
    r = await run([...CHECK, "--json", "--junit", join(w.dir, "junit.xml")], w.env);
    // Every check starts fresh plugin processes; a loaded machine slows each start.
  }, 300_000);
  afterAll(() => w.done());

  it("passes every check and exits 0", () => {
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Verdict[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => [c.id, c.result])).toEqual(
      CHECK_IDS.map((id) => [id, SKIPS.includes(id) ? "skip" : "pass"]),
    );
  });

  it("writes JUnit with one testcase per check", () => {
    const xml = readFileSync(join(w.dir, "junit.xml"), "utf8");
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites /);
    expect(xml).toContain(`tests="${CHECK_IDS.length}" failures="0" skipped="${SKIPS.length}"`);
    for (const id of CHECK_IDS) expect(xml).toContain(`name="${id}"`);
  });
});

describe.concurrent("each broken sim variant fails exactly its check", () => {
  it.each(VARIANTS)(
    "$variant -> $fails",
    async ({ faults, fails, headline }) => {
      const w = await registered(faults);
      try {
        const r = await run([...CHECK, "--junit", join(w.dir, "junit.xml")], w.env);
        const got = results(r.stdout);
        expect(Object.keys(got)).toEqual([...CHECK_IDS]);
        const failed = Object.entries(got).filter(([, v]) => v === "FAIL");
        expect(
          failed.map(([id]) => id),
          r.stdout,
        ).toEqual(fails);
        // The checks that ask new processes what a replay check asks first
        // step aside when that replay check failed.
        const afterReplay = [
          ...(fails.includes("host.replay") ? ["host.gone", "host.facts", "host.inflight"] : []),
          ...(fails.includes("job.replay") ? ["job.inflight"] : []),
        ];
        const skipped = Object.keys(got).filter((id) => got[id] === "skip");
        expect(skipped).toEqual(
          CHECK_IDS.filter((id) => SKIPS.includes(id) || afterReplay.includes(id)),
        );
        expect(r.code).toBe(4);
        expect(r.stderr).toMatch(
          new RegExp(
            `^mu: check: 'sim' failed ${fails.length} of ${CHECK_IDS.length} checks \\(${fails.join(", ").replaceAll(".", "\\.")}\\); [^\\n]+\\n$`,
          ),
        );
        // The failure shows its evidence under the FAIL line.
        const lines = r.stdout.split("\n");
        const at = lines.findIndex((l) => l.startsWith(`FAIL  ${fails[0]} `));
        if (headline) expect(lines[at], r.stdout).toMatch(headline);
        expect(lines[at + 1], r.stdout).toMatch(/^ {8}\S/);
        expect(readFileSync(join(w.dir, "junit.xml"), "utf8")).toContain(
          `failures="${fails.length}" skipped="${skipped.length}"`,
        );
      } finally {
        w.done();
      }
    },
    // Ignoring EOF costs the handshake's two starts and eof's the whole 5 s
    // grace (the later starts are killed at once); a loaded machine slows
    // every start, and the variants run at once.
    600_000,
  );
});

describe("mu plugin check never writes the canary", () => {
  it("a canary in link.exec's stdout fails link.exec and canary; no line or file shows its value", async () => {
    const w = await registered([{ on: "link.exec", times: "always", do: { leakCanary: "reply" } }]);
    try {
      const junitFile = join(w.dir, "junit.xml");
      const r = await run([...CHECK, "--junit", junitFile], w.env);
      expect(r.code).toBe(4);
      const got = results(r.stdout);
      expect(got["link.exec"]).toBe("FAIL");
      expect(got.canary).toBe("FAIL");
      const value = /canary-[0-9a-f]{32}/;
      expect(r.stdout).toContain("<canary>");
      for (const text of [r.stdout, r.stderr, readFileSync(junitFile, "utf8")])
        expect(text).not.toMatch(value);
    } finally {
      w.done();
    }
  }, 180_000);
});

describe("mu plugin check on a link without push or fetch", () => {
  it("skips link.push and link.fetch, saying why, and runs the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
    const state = tempState();
    try {
      const world = World.create(join(dir, "world"), {
        preset: "link-only",
        instance: "sim-1",
        hello: { seams: { link: { fetch: false, push: false } } },
      });
      expect(
        (await run(["plugin", "add", "sim", "--", sim, "--world", world.dir], state.env)).code,
      ).toBe(0);
      const r = await run(["plugin", "check", "sim"], state.env);
      expect(r.code, r.stdout).toBe(0);
      const got = results(r.stdout);
      expect([got["link.exec"], got["link.push"], got["link.fetch"], got["link.timeout"]]).toEqual([
        "ok",
        "skip",
        "skip",
        "ok",
      ]);
      expect(r.stdout).toMatch(/^skip +link\.push +the link does not declare push: true$/m);
      expect(r.stdout).toMatch(/^skip +link\.fetch +the link declares fetch: false /m);
    } finally {
      state.done();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("mu plugin check usage", () => {
  let w: Awaited<ReturnType<typeof registered>>;
  beforeAll(async () => {
    w = await registered();
  });
  afterAll(() => w.done());

  it.each([
    [
      ["--seam", "box"],
      /^mu: usage: --seam 'box' is not a seam; use link or host or job or channel\n$/,
    ],
    [["--param", "a=b"], /^mu: usage: --param is only used by the host, job and channel checks; /],
    [["--seam", "host", "--param", "ab"], /^mu: usage: --param 'ab' is not k=v; /],
    [
      ["--repeat", "0"],
      /^mu: usage: --repeat '0' is not valid; give a whole number of rounds from 1 to 1000, [^\n]*\n$/,
    ],
    [["--repeat", "0x10"], /^mu: usage: --repeat '0x10' is not valid; /],
  ])("%j is a usage error", async (args, pattern) => {
    const r = await mu(["plugin", "check", "sim", ...args], w.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(pattern);
  });

  it("an unregistered plugin is not found (exit 3)", async () => {
    const r = await mu(["plugin", "check", "nope"], w.env);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^mu: plugin: no plugin named 'nope'; register it first: /);
  });

  it("--host runs a provider's link checks on a host mu acquired, without --seam host", async () => {
    const acq = await mu(
      ["host", "acquire", "--provider", "sim", "h1", "--param", "size=small"],
      w.env,
    );
    expect(acq.code, acq.stderr).toBe(0);
    try {
      const r = await run(["plugin", "check", "sim", "--host", "h1", "--repeat", "1"], w.env);
      expect(r.code, r.stdout).toBe(0);
      const got = results(r.stdout);
      for (const id of ["link.exec", "link.push", "link.fetch", "link.timeout"])
        expect([id, got[id]]).toEqual([id, "ok"]);
      expect(got["host.lifecycle"]).toBe("skip");
      expect(r.stdout).toMatch(/^ok +link\.exec +on host h1: /m);
    } finally {
      expect((await mu(["host", "release", "h1"], w.env)).code).toBe(0);
    }
  }, 120_000);

  it("without --seam host the host checks are skipped, saying why", async () => {
    const r = await run(["plugin", "check", "sim", "--repeat", "1"], w.env);
    expect(r.code).toBe(0);
    const got = results(r.stdout);
    expect(got["host.lifecycle"]).toBe("skip");
    expect(got["host.idempotency"]).toBe("skip");
    expect(got["host.replay"]).toBe("skip");
    expect(got["job.replay"]).toBe("skip");
    expect(got["link.timeout"]).toBe("skip");
    expect(got["job.lifecycle"]).toBe("skip");
    expect(got["channel.lifecycle"]).toBe("skip");
    expect(r.stdout).toMatch(
      /^skip {2}host\.lifecycle {4}it acquires a real machine: add --seam host/m,
    );
  }, 120_000);
});

describe("mu plugin check cut short by a signal", () => {
  it("leaves no scratch directory of its own behind", async () => {
    const w = await registered();
    const scratch = mkdtempSync(join(tmpdir(), "mu-check-tmp-"));
    try {
      const code = await new Promise<number | null>((done) => {
        const child = spawn(process.execPath, [muBin, "plugin", "check", "sim", "--repeat", "1"], {
          env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...w.env, TMPDIR: scratch },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (b: Buffer) => {
          out += b.toString();
          // Signal once the suite is under way (its scratch exists by then).
          if (out.includes("\nok ") || out.includes("\nFAIL")) child.kill("SIGINT");
        });
        child.on("close", (c, sig) => done(c ?? (sig ? 128 : null)));
      });
      expect(code).not.toBe(0);
      expect(readdirSync(scratch).filter((n) => n.startsWith("mu-check-"))).toEqual([]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
      w.done();
    }
  }, 120_000);
});
