import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import { checking, expectFailed, registered as registerFixture } from "./fixture-check.js";
import { muChild } from "./helpers.js";

// `mu plugin check --seam host` against a provider not built on the sim
// (test/fixtures/host-plugin.mjs): its backend is a directory every process
// shares, it dedupes on the key and every param, fences keys, and its
// machines come up a moment after the request. Correct, it passes every
// check it declares; each way it can be broken fails exactly the check aimed
// at it.

const BREAKS = [
  {
    broken: "memory-dedupe",
    fails: "host.replay",
    headline: /^the identical host\.acquire sent to a new process did not return the first result$/,
  },
  {
    broken: "memory-records",
    fails: "host.replay",
    headline: /^the identical host\.acquire sent to a new process did not return the first result$/,
  },
  {
    broken: "forget-released",
    fails: "host.replay",
    headline:
      /^host\.lookup from a new process after the release answered \{"none":true\}, not found with handle fx-/,
  },
  {
    broken: "release-once",
    fails: "host.replay",
    headline:
      /^a second host\.release, from another new process: host\.release answered an error \(permanent\): /,
  },
  {
    broken: "ignore-fence",
    fails: "host.replay",
    headline: /^a host\.acquire after a fenced host\.lookup of its key answered none took effect$/,
  },
  {
    broken: "gone-usable",
    fails: "host.gone",
    headline:
      /^host\.status answered gone for fx-\w+, yet link\.exec from a new process still ran a script there and read the file left before the release$/,
  },
  {
    broken: "random-instance",
    fails: "handshake",
    headline: /^the two starts named different instances \(fx-\w+, then fx-\w+\)/,
  },
  {
    broken: "refuse-after-effect",
    fails: "host.errors",
    headline:
      /^host\.acquire answered permanent, which says nothing happened, yet host\.lookup then found the machine$/,
  },
  {
    broken: "null-facts",
    fails: "host.facts",
    headline:
      /^host\.status from a new process, as its first call cleared deadlineAt with null, then host\.status from a new process, after its lookup sent it back unchanged \(\d+\)/,
  },
  {
    broken: "late-effect",
    fails: "host.inflight",
    headline:
      /^inFlightMs is 100, yet a host\.lookup sent \d+ ms after the acquire was sent answered none, and the machine came up \d+ ms after the acquire was sent$/,
  },
] as const;

/** Declared, but not named on the command line, or not declared at all. */
const SKIPPED = [
  "link.push",
  "link.fetch",
  "link.git-timeout",
  ...CHECK_IDS.filter((id) => /^(job|channel)\./.test(id)),
];

/** Checks that skip rather than fail again for host.replay's reason. */
const AFTER_REPLAY = ["host.gone", "host.facts", "host.inflight"];

const CHECK = ["plugin", "check", "hfx", "--seam", "host", "--repeat", "2"];

/** The fixture installed as mu-plugin-hfx and registered, broken as asked. */
const registered = (broken?: string) => registerFixture("host-plugin.mjs", "hfx", broken);

describe.concurrent("mu plugin check on a stand-alone provider", () => {
  it("the correct provider passes every host check, each saying what it exercised", async () => {
    const w = await registered();
    try {
      const r = await checking(CHECK, w.env);
      expect(r.stderr).toBe("");
      expect(r.code, r.stdout).toBe(0);
      const got = r.got;
      expect(Object.keys(got)).toEqual([...CHECK_IDS]);
      for (const id of CHECK_IDS)
        expect([id, got[id]?.mark]).toEqual([id, SKIPPED.includes(id) ? "skip" : "ok"]);
      expect(got["host.replay"]?.detail).toMatch(
        /the identical acquire returned the first result; lookup found it up and released; .*; an acquire after a fenced none was refused \(permanent\) and made nothing$/,
      );
      expect(got["host.gone"]?.detail).toMatch(
        /^a file left on the machine, released from a new process, status gone, then link\.exec there from another was refused \(permanent\)$/,
      );
      expect(got["host.facts"]?.detail).toMatch(/^the facts deadlineAt, idleReclaimMs, maxJobs /);
      expect(got["host.errors"]?.detail).toMatch(
        /^an acquire with a --param no one gave was refused \(permanent\) and a lookup found nothing/,
      );
      expect(got["host.inflight"]?.detail).toMatch(
        /^lookups from another process answered none up to \d+ ms after the acquire was sent, then it landed at \d+ ms, inside the declared inFlightMs 10000$/,
      );
      // After the count: what was not run and what no check reaches; nothing partly exercised.
      expect(r.stdout).toMatch(
        new RegExp(
          `^not run: ${SKIPPED.join(", ").replaceAll(".", "\\.")} \\(each skip line says why\\)$`,
          "m",
        ),
      );
      expect(r.stdout).not.toMatch(/^not exercised:/m);
      expect(r.stdout).toMatch(/^never checked: human errors; unknown-outcome; /m);
      // Every key the run acquired under was released, by the checks or at the end.
      expect(r.stdout).toMatch(
        /^cleaned: released every machine it acquired \(\d+\), and released by key the 2 whose acquire was refused, /m,
      );
      expect(r.stdout).not.toMatch(/^left:/m);
    } finally {
      w.done();
    }
  }, 180_000);

  it("a provider that refuses to release a key it never made a machine for: every check passes, and each such key is left, named", async () => {
    const w = await registered("refuse-unknown-release");
    try {
      const r = await checking(CHECK, w.env);
      expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
      // The two refused acquires' keys: the release by key at the end was refused.
      const left = r.stdout.split("\n").filter((l) => l.startsWith("left: "));
      expect(left, r.stdout).toHaveLength(2);
      for (const l of left)
        expect(l).toMatch(
          /^left: +the machine for key (mu-check-\w+-\S+): the release at the end failed \(host\.release answered an error \(permanent\): no machine for key \1\); release it at the provider$/,
        );
      expect(r.stdout).not.toMatch(/^cleaned: released every machine/m);
    } finally {
      w.done();
    }
  }, 180_000);

  it.each(BREAKS)(
    "$broken fails exactly $fails",
    async (b) => {
      const w = await registered(b.broken);
      try {
        const r = await checking(CHECK, w.env);
        expectFailed(r, "hfx", [b.fails], b.headline);
        // Only a failed replay makes the checks after it step aside (a failed
        // handshake, every check that needs a start).
        const skipped = Object.entries(r.got)
          .filter(([id, v]) => v.mark === "skip" && !SKIPPED.includes(id))
          .map(([id]) => id);
        if (b.fails !== "handshake")
          expect(skipped, r.stdout).toEqual(b.fails === "host.replay" ? AFTER_REPLAY : []);
      } finally {
        w.done();
      }
    },
    180_000,
  );
});

describe("mu plugin check --help", () => {
  it("lists every check under its seam, what the options do, the cleanup and the exit codes", async () => {
    const r = await muChild(["plugin", "check", "--help"], {});
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\s+/g, " ");
    for (const seam of ["link", "host", "job", "channel"]) {
      const ids = CHECK_IDS.filter((id) => id.startsWith(`${seam}.`));
      expect(text, seam).toContain(` ${seam} ${ids.join(", ")}`);
    }
    expect(text).toContain(
      "any plugin handshake, eof; after the rest: messages, canary, containment",
    );
    for (const opt of [
      "--seam host, job or channel runs",
      "--param passes",
      "--host aims",
      "--repeat sets",
    ])
      expect(text).toContain(opt);
    expect(text).toContain(
      "After the count, not run:, not exercised: and never checked: lines say what the run did not prove",
    );
    expect(text).toContain("The run removes what it made");
    expect(text).toMatch(
      /a cleaned: line says what was removed, and a left: line names what could not be, with the command/,
    );
    expect(text).toContain(
      "Exit codes: 0 nothing failed, 4 a check failed, 2 a usage error, 3 no such plugin or host.",
    );
  });
});
