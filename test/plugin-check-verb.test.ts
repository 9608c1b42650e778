import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { checking, type Registered, registered } from "./fixture-check.js";
import { mu, muChild, tempState } from "./helpers.js";

// The verb around the checks, on a plugin whose run is short: the channel
// fixture with no --seam runs only the checks every plugin gets (a couple of
// seconds), so what `mu plugin check` prints, writes and exits with can be
// pinned line by line, for a run that passes and for runs that fail.

const root = packageRoot();
const SCHEMA = join(root, "schemas/plugin-protocol-v1.json");
const RUNS = ["handshake", "eof", "messages", "canary", "containment"];
const NO_LINK = CHECK_IDS.filter((id) => id.startsWith("link."));
const NO_HOST = CHECK_IDS.filter((id) => id.startsWith("host."));
const JOB_SKIP = "it starts a real job: add --seam job and the --param values it needs";
const CHANNEL_SKIP = "it starts a real job: add --seam channel and the --param values it needs";

let open: Registered[] = [];
let dirs: string[] = [];
afterEach(() => {
  for (const w of open) w.done();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  open = [];
  dirs = [];
});

const fixture = async () => {
  const w = await registered("channel-plugin.mjs", "cfx");
  open.push(w);
  return w;
};

/**
 * The channel fixture behind a shell script registered as `name`; once
 * registered, the script first does `before` on every start.
 */
async function wrapped(name: string, before: string): Promise<Registered> {
  const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
  dirs.push(dir);
  mkdirSync(join(dir, "lib"));
  mkdirSync(join(dir, "backend"));
  // The fixture names itself after its file: the same basename as the script.
  const lib = join(dir, "lib", `mu-plugin-${name}`);
  copyFileSync(join(root, "test/fixtures/channel-plugin.mjs"), lib);
  const exe = join(dir, `mu-plugin-${name}`);
  const armed = join(dir, "armed");
  writeFileSync(
    exe,
    `#!/bin/sh\nif [ -e "${armed}" ]; then ${before}; fi\nexec "${process.execPath}" "${lib}" --schema "${SCHEMA}" --home "${join(dir, "backend")}" "$@"\n`,
  );
  chmodSync(exe, 0o755);
  const state = tempState();
  const w = { home: join(dir, "backend"), env: state.env, done: state.done };
  open.push(w);
  const add = await muChild(["plugin", "add", name, "--", exe], w.env);
  expect(add.stderr).toBe("");
  writeFileSync(armed, "");
  return w;
}

describe("mu plugin check, the verb", () => {
  it("prints a line a check as it ends, the count, and what the run did not prove", async () => {
    const w = await fixture();
    const r = await checking(["plugin", "check", "cfx"], w.env);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^checking plugin cfx \(\/\S+\/mu-plugin-cfx --schema \S+ --home \S+\)$/,
    );
    expect(Object.keys(r.got)).toEqual([...CHECK_IDS]);
    for (const id of CHECK_IDS)
      expect([id, r.got[id]?.mark]).toEqual([id, RUNS.includes(id) ? "ok" : "skip"]);
    for (const id of NO_LINK) expect(r.got[id]?.detail).toBe("the plugin declares no link seam");
    for (const id of NO_HOST) expect(r.got[id]?.detail).toBe("the plugin declares no host seam");
    for (const id of [
      "job.lifecycle",
      "job.idempotency",
      "job.replay",
      "job.attach",
      "job.checkSteps",
    ])
      expect([id, r.got[id]?.detail]).toEqual([id, JOB_SKIP]);
    expect(r.got["job.inflight"]?.detail).toBe("the start declares no inFlightMs");
    for (const id of CHECK_IDS.filter((c) => c.startsWith("channel.")))
      expect([id, r.got[id]?.detail]).toEqual([id, CHANNEL_SKIP]);
    expect(r.got.handshake?.detail).toBe(
      "protocol 1, cfx 0.1.0, instance fixture, seams job, channel: valid, digest matches, loads; the same on two starts",
    );
    expect(r.got.canary?.detail).toMatch(
      /^MU_PLUGIN_CANARY never appeared on stdout or stderr in \d+ starts$/,
    );
    const tail = lines.slice(lines.indexOf("cfx: 5 passed, 0 failed, 28 skipped"));
    expect(tail).toEqual([
      "cfx: 5 passed, 0 failed, 28 skipped",
      `not run: ${CHECK_IDS.filter((id) => !RUNS.includes(id)).join(", ")} (each skip line says why)`,
      "never checked: human errors; unknown-outcome; a gone for a machine mu did not release, and a gone machine's jobs; a fact left out of up that was meant to be cleared",
      "",
    ]);
  }, 60_000);

  it("--json gives the same run as one document, and --junit writes it for a CI page", async () => {
    const w = await fixture();
    const out = mkdtempSync(join(tmpdir(), "mu-junit-"));
    dirs.push(out);
    const file = join(out, "check.xml");
    const r = await muChild(
      ["plugin", "check", "cfx", "--json", "--repeat", "3", "--junit", file],
      w.env,
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const doc = JSON.parse(r.stdout) as Record<string, unknown> & {
      checks: { id: string; result: string; evidence: string[]; ms: number }[];
      uncovered: string[];
    };
    expect(Object.keys(doc)).toEqual(["plugin", "ok", "repeat", "checks", "uncovered", "cleanup"]);
    expect([doc.plugin, doc.ok, doc.repeat, doc.cleanup]).toEqual([
      "cfx",
      true,
      3,
      { removed: [], left: [] },
    ]);
    expect(doc.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
    expect(doc.checks.filter((c) => c.result === "pass").map((c) => c.id)).toEqual(RUNS);
    expect(doc.uncovered).toHaveLength(2);
    const xml = readFileSync(file, "utf8");
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="mu plugin check" tests="33" failures="0" skipped="28" time="[\d.]+">\n/,
    );
    expect(xml.match(/<testcase /g)).toHaveLength(33);
    expect(xml.match(/<skipped message=/g)).toHaveLength(28);
  }, 60_000);

  it("defaults to 10 rounds", async () => {
    const w = await fixture();
    const r = await muChild(["plugin", "check", "cfx", "--json"], w.env);
    expect((JSON.parse(r.stdout) as { repeat: number }).repeat).toBe(10);
  }, 60_000);

  it("a JUnit path it cannot write is one line and exit 5, after the run", async () => {
    const w = await fixture();
    const r = await muChild(["plugin", "check", "cfx", "--junit", "/nonexistent-dir/x.xml"], w.env);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe(
      "mu: check: cannot write the JUnit report to /nonexistent-dir/x.xml: ENOENT: no such file or directory, open '/nonexistent-dir/x.xml'; give --junit a path in a directory you can write\n",
    );
    expect(r.stdout).toContain("ok    containment");
  }, 60_000);

  it("a failed check is exit 4 and one line naming it; the canary's value is nowhere", async () => {
    const w = await wrapped("leaky", 'echo "debug: token $MU_PLUGIN_CANARY" >&2');
    const out = mkdtempSync(join(tmpdir(), "mu-junit-"));
    dirs.push(out);
    const file = join(out, "check.xml");
    const r = await checking(["plugin", "check", "leaky", "--junit", file], w.env);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(
      "mu: check: 'leaky' failed 1 of 33 checks (canary); fix what each FAIL line shows, then run mu plugin check again\n",
    );
    expect(r.got.canary?.mark).toBe("FAIL");
    expect(r.got.canary?.detail).toMatch(/^the value of MU_PLUGIN_CANARY came back in \d+ lines$/);
    expect(r.stdout).toMatch(/^ {8}\[handshake\] stderr: debug: token <canary>$/m);
    expect(r.stdout).toContain("leaky: 4 passed, 1 failed, 28 skipped\n");
    const xml = readFileSync(file, "utf8");
    expect(xml).toMatch(/failures="1" skipped="28"/);
    expect(xml).toMatch(
      /<failure message="the value of MU_PLUGIN_CANARY came back in \d+ lines">\[handshake\] stderr: debug: token &lt;canary&gt;/,
    );
    expect(`${r.stdout}${r.stderr}${xml}`).not.toMatch(/canary-[0-9a-f]{32}/);
  }, 60_000);

  it("a plugin that cannot start fails the handshake with its stderr; only the checks over the starts run after it", async () => {
    const w = await wrapped("dead", 'echo "cannot open /etc/dead.conf" >&2; exit 3');
    const r = await checking(["plugin", "check", "dead"], w.env);
    expect(r.code).toBe(4);
    expect(r.got.handshake?.mark).toBe("FAIL");
    expect(r.got.handshake?.detail).toMatch(
      /^start 1 did not load: mu: plugin: 'dead' did not answer the handshake: .*\(stderr: cannot open \/etc\/dead\.conf\)$/,
    );
    expect(r.stdout).toMatch(/^ {8}stderr: cannot open \/etc\/dead\.conf$/m);
    const after = CHECK_IDS.filter(
      (id) => !["handshake", "messages", "canary", "containment"].includes(id),
    );
    for (const id of after)
      expect([id, r.got[id]?.mark, r.got[id]?.detail]).toEqual([
        id,
        "skip",
        "the plugin did not pass the handshake; fix that first",
      ]);
    expect(r.got.messages?.detail).toMatch(/^0 lines from 1 start, /);
    expect(r.stdout).toContain("dead: 3 passed, 1 failed, 29 skipped\n");
    expect(r.stderr).toBe(
      "mu: check: 'dead' failed 1 of 33 checks (handshake); fix what each FAIL line shows, then run mu plugin check again\n",
    );
  }, 60_000);

  it("refuses a host it does not know, or one of another plugin, before it starts anything", async () => {
    const w = await fixture();
    const none = await muChild(["plugin", "check", "cfx", "--host", "nope"], w.env);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^mu: host: no host named 'nope'/);
    expect(none.stdout).toBe("");
    const sim = join(root, "sim/bin/mu-plugin-sim");
    const world = join(w.home, "world");
    World.create(world, { preset: "link-job", instance: "sim-1" });
    expect(
      (await muChild(["plugin", "add", "sim", "--", sim, "--world", world], w.env)).stderr,
    ).toBe("");
    expect((await muChild(["host", "add", "box", "--plugin", "sim"], w.env)).code).toBe(0);
    const other = await muChild(["plugin", "check", "cfx", "--host", "box"], w.env);
    expect([other.code, other.stderr]).toEqual([
      2,
      "mu: usage: host 'box' is reached through plugin 'sim', not 'cfx'; name a host of 'cfx' (see: mu host list), or run mu plugin check sim\n",
    ]);
  }, 60_000);

  it.each([
    [["--seam", "box"], "--seam 'box' is not a seam; use link or host or job or channel"],
    [
      ["--param", "a=b"],
      "--param is only used by the host, job and channel checks; add the --seam they are for, or drop --param",
    ],
    [
      ["--seam", "link", "--param", "a=b"],
      "--param is only used by the host, job and channel checks; add the --seam they are for, or drop --param",
    ],
    [["--seam", "host", "--param", "ab"], "--param 'ab' is not k=v; write --param region=eu"],
    [["--seam", "job", "--param", "=b"], "--param '=b' is not k=v; write --param region=eu"],
    [
      ["--repeat", "0"],
      "--repeat '0' is not valid; give a whole number of rounds from 1 to 1000, in plain digits, e.g. --repeat 10",
    ],
    [
      ["--repeat", "1001"],
      "--repeat '1001' is not valid; give a whole number of rounds from 1 to 1000, in plain digits, e.g. --repeat 10",
    ],
  ])("%j is a usage error, before anything starts", async (args, line) => {
    const w = await fixture();
    const r = await mu(["plugin", "check", "cfx", ...args], w.env);
    expect([r.code, r.stderr, r.stdout]).toEqual([2, `mu: usage: ${line}\n`, ""]);
  });

  it("a plugin mu does not know is exit 3, with how to register it", async () => {
    const w = await fixture();
    const r = await mu(["plugin", "check", "nope"], w.env);
    expect([r.code, r.stderr]).toEqual([
      3,
      "mu: plugin: no plugin named 'nope'; register it first: mu plugin add nope -- /abs/path/mu-plugin-nope\n",
    ]);
  });
});
