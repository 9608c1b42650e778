import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import { packageRoot } from "../host/package-root.js";
import { muChild, tempState } from "./helpers.js";

// `mu plugin check --seam channel` against a job and channel plugin not
// built on the sim (test/fixtures/channel-plugin.mjs): correct, it passes
// every channel check; each way it can be broken fails exactly the check
// aimed at it, with a headline that says what broke.

const BREAKS = [
  {
    broken: "baseline-zero",
    fails: "channel.turns",
    headline: /^the second channel\.send answered baseline 0, where 1 turns had settled$/,
  },
  {
    broken: "runs-by-two",
    fails: "channel.turns",
    headline:
      /^runs went from 0 to 2 with one turn: runs must grow by exactly one per settled turn$/,
  },
  {
    broken: "resend-twice",
    fails: "channel.dedupe",
    headline: /^a resend of msgId msg-check-\w+ right after it did not answer the first reply$/,
  },
  {
    broken: "accept-any",
    fails: "channel.receipts",
    headline:
      /^channel\.receipt of msgId (msg-check-\w+), never sent, answered accepted for \1, not not-accepted for it$/,
  },
  {
    broken: "settle-first",
    fails: "channel.watch",
    headline: /^the notification of watch cw\d+-1 came before the reply to its channel\.watch$/,
  },
  {
    broken: "ignore-cancel",
    fails: "channel.watch",
    headline:
      /^watch cw\d+-2 was ended by \$\/cancel before a turn past it began, yet its notification came once runs reached 2$/,
  },
  {
    broken: "ignore-incarnation",
    fails: "channel.controls",
    headline:
      /^channel\.send with expectIncarnation 1, not the agent's incarnation, was answered, not refused$/,
  },
] as const;

/** What runs with --seam channel on a plugin of one backend, no link. */
const RUNS = new Set([
  "handshake",
  "eof",
  "channel.lifecycle",
  "channel.turns",
  "channel.dedupe",
  "channel.receipts",
  "channel.watch",
  "channel.controls",
  "messages",
  "canary",
  "containment",
]);

const CHECK = ["plugin", "check", "cfx", "--seam", "channel"];

const run = muChild;

/** The fixture installed as mu-plugin-cfx and registered, broken as asked. */
async function registered(broken?: string) {
  // Named so the suite's teardown finds anything this test leaves running.
  const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
  const exe = join(dir, "mu-plugin-cfx");
  copyFileSync(join(packageRoot(), "test/fixtures/channel-plugin.mjs"), exe);
  chmodSync(exe, 0o755);
  const home = join(dir, "backend");
  mkdirSync(home);
  const state = tempState();
  const argv = [
    exe,
    ...["--schema", join(packageRoot(), "schemas/plugin-protocol-v1.json")],
    ...["--home", home],
    ...(broken ? ["--break", broken] : []),
  ];
  const add = await run(["plugin", "add", "cfx", "--", ...argv], state.env);
  expect(add.stderr).toBe("");
  return {
    env: state.env,
    done() {
      state.done();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const LINE = /^(ok {2}|FAIL|skip) {2}(\S+) +(.*)$/;

function results(stdout: string): Record<string, { mark: string; detail: string }> {
  const out: Record<string, { mark: string; detail: string }> = {};
  for (const l of stdout.split("\n")) {
    const m = LINE.exec(l);
    if (m?.[1] && m[2]) out[m[2]] = { mark: m[1].trim(), detail: m[3] ?? "" };
  }
  return out;
}

describe.concurrent("mu plugin check on a stand-alone channel plugin", () => {
  it("the correct plugin passes every channel check", async () => {
    const w = await registered();
    try {
      const r = await run(CHECK, w.env);
      expect(r.stderr).toBe("");
      expect(r.code, r.stdout).toBe(0);
      const got = results(r.stdout);
      expect(Object.keys(got)).toEqual([...CHECK_IDS]);
      for (const id of CHECK_IDS)
        expect([id, got[id]?.mark]).toEqual([id, RUNS.has(id) ? "ok" : "skip"]);
      expect(got["channel.controls"]?.detail).toBe(
        "fresh; a send with expectIncarnation 1 refused, nothing delivered; command; interrupt; abort; answer",
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
        const r = await run(CHECK, w.env);
        const got = results(r.stdout);
        const failed = Object.entries(got).filter(([, v]) => v.mark === "FAIL");
        expect(
          failed.map(([id]) => id),
          r.stdout,
        ).toEqual([b.fails]);
        expect(got[b.fails]?.detail, r.stdout).toMatch(b.headline);
        expect(r.code).toBe(4);
        expect(r.stderr).toMatch(
          new RegExp(
            `^mu: check: 'cfx' failed 1 of \\d+ checks \\(${b.fails.replace(".", "\\.")}\\); `,
          ),
        );
      } finally {
        w.done();
      }
    },
    120_000,
  );
});
