import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../host/contract/verdict.js";
import {
  checking,
  expectEvidence,
  expectFailed,
  registered as registerFixture,
} from "./fixture-check.js";

// `mu plugin check --seam channel` against a job and channel plugin not
// built on the sim (test/fixtures/channel-plugin.mjs): correct, it passes
// every channel check; each way it can be broken fails exactly the check
// aimed at it, with a headline that says what broke.

const BREAKS = [
  {
    broken: "baseline-zero",
    fails: "channel.turns",
    headline: /^the second channel\.send answered baseline 0, where 1 turns had settled$/,
    evidence: [/^\{"ack":"confirmed","baseline":0,"channel":"cfx","msgId":"msg-check-\w+"\}$/],
  },
  {
    broken: "runs-by-two",
    fails: "channel.turns",
    headline:
      /^runs went from 0 to 2 with one turn: runs must grow by exactly one per settled turn$/,
    evidence: [/^channel\.baseline before: runs 0$/, /^after one turn: runs 2$/],
  },
  {
    broken: "first-past-text",
    fails: "channel.turns",
    headline:
      /^channel\.lastRun past 0, 2 turns back, answered another turn than past 1: an observation is of the last settled turn, its runs and its text alike$/,
    evidence: [
      /^past 0: \{.*\(the first turn\)\\"","runs":2,/,
      /^past 1: \{.*\(the second turn\)\\"","runs":2,/,
    ],
  },
  {
    broken: "resend-twice",
    fails: "channel.dedupe",
    headline: /^a resend of msgId msg-check-\w+ right after it did not answer the first reply$/,
    evidence: [
      /^first: \{"ack":"confirmed","baseline":\d+,/,
      /^resend: \{"ack":"confirmed","baseline":\d+,/,
    ],
  },
  {
    broken: "accept-any",
    fails: "channel.receipts",
    headline:
      /^channel\.receipt of msgId (msg-check-\w+), never sent, answered accepted for \1, not not-accepted for it$/,
    evidence: [
      /^\{"at":\d+,"id":"msg-check-\w+","incarnation":\d+,"runs":\d+,"state":"accepted"\}$/,
    ],
  },
  {
    broken: "receipt-other-id",
    fails: "channel.receipts",
    headline:
      /^channel\.receipt of msgId msg-check-\w+, never sent, answered not-accepted for msg-other, not not-accepted for it$/,
    evidence: [/^\{"id":"msg-other","state":"not-accepted"\}$/],
  },
  {
    broken: "settle-first",
    fails: "channel.watch",
    headline: /^the notification of watch cw\d+-1 came before the reply to its channel\.watch$/,
    // The reply may or may not be on record after it: the lines start with the notification.
    evidenceStarts: [
      /^\{"jsonrpc":"2\.0","method":"watch\/settled","params":\{"watchId":"cw\d+-1",/,
    ],
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
  // Each resend starts a turn. How many have settled when the check first
  // reads the count depends on the machine's speed: the first resend's turn
  // may already show there, and is then the count held.
  {
    broken: "resend-runs-again",
    fails: "channel.dedupe",
    headline:
      /^msgId msg-check-\w+ was sent three times with identical params and a second turn ran: channel\.baseline reads runs [23] \d+ ms later, not [12]$/,
    evidence: [/^\{"incarnation":1,"runs":[23]\}$/],
  },
  {
    broken: "later-other-msgid",
    fails: "channel.turns",
    headline: /^channel\.send answered channel cfx and msgId msg-other, not cfx and msg-check-\w+$/,
    evidence: [
      /^sent msgId msg-check-\w+$/,
      /^\{"ack":"confirmed","baseline":1,"channel":"cfx","msgId":"msg-other"\}$/,
    ],
  },
  {
    broken: "later-other-channel",
    fails: "channel.turns",
    headline:
      /^channel\.send answered channel elsewhere and msgId (msg-check-\w+), not cfx and \1$/,
  },
  {
    broken: "states-behind",
    fails: "channel.turns",
    headline:
      /^channel\.readStates after two turns reads runs 1 for mu-check\/check-\w+, where channel\.baseline reads 2$/,
    evidence: [
      /^\{"mu-check\/check-\w+":\{"incarnation":1,"runs":1,"since":\d+,"state":"idle"\}\}$/,
    ],
  },
  {
    broken: "states-none",
    fails: "channel.turns",
    headline:
      /^channel\.readStates before the sends holds no reading for the asked agent mu-check\/check-\w+$/,
    evidence: [/^\{\}$/],
  },
  {
    broken: "lastrun-always",
    fails: "channel.turns",
    headline: /^channel\.lastRun past 0, the current count, answered a turn, not null$/,
  },
  {
    broken: "lastrun-null",
    fails: "channel.turns",
    headline: /^channel\.lastRun past 0 answered null after a turn past it settled$/,
    evidence: [/^null$/],
  },
  {
    broken: "lastrun-at-after",
    fails: "channel.turns",
    headline:
      /^channel\.lastRun past 0 answered runs 0, settled true after a turn past it settled$/,
    evidence: [/^\{"incarnation":1,"lastText":".*\(the first turn\)\\"","runs":0,"settled":true,/],
  },
  {
    broken: "settled-silent",
    fails: "channel.watch",
    headline: /^a watch past run 0, opened once runs read 1, had no notification within 10 s$/,
  },
  {
    broken: "settled-at-after",
    fails: "channel.watch",
    headline: /^a watch past run 0, a turn past it settled, ended with watch\/settled at runs 0$/,
    evidence: [/^\{"observation":\{"incarnation":1,.*"runs":0,.*\},"watchId":"cw\d+-1"\}$/],
  },
  {
    broken: "settled-restarted",
    fails: "channel.watch",
    headline:
      /^a watch past run 0, a turn past it settled, ended with watch\/restarted at runs undefined$/,
    evidence: [/^\{"incarnation":1,"watchId":"cw\d+-1"\}$/],
  },
  // Every start's load rules hold it to the declaration plugin add recorded.
  {
    broken: "wobble-caps",
    fails: "handshake",
    headline:
      /^start 2 did not load: mu: plugin: 'cfx' refused \(declaration\.changed\): its declaration differs from the one recorded by 'mu plugin add'; re-register it: mu plugin add cfx -- .*$/,
  },
  // The lifecycle check's own promises, each broken on the first job alone.
  {
    broken: "other-msgid",
    fails: "channel.lifecycle",
    headline: /^channel\.send answered channel cfx and msgId msg-other, not cfx and msg-check-\w+$/,
    evidence: [
      /^sent msgId msg-check-\w+ on channel cfx$/,
      /^\{"ack":"confirmed","baseline":0,"channel":"cfx","msgId":"msg-other"\}$/,
    ],
  },
  {
    broken: "other-channel",
    fails: "channel.lifecycle",
    headline:
      /^channel\.send answered channel elsewhere and msgId (msg-check-\w+), not cfx and \1$/,
  },
  {
    broken: "receipt-refused",
    fails: "channel.lifecycle",
    headline:
      /^channel\.receipt of a delivery just made answered state not-accepted for msgId (msg-check-\w+), not accepted for \1$/,
    evidence: [/^asked msg-check-\w+$/, /^\{"id":"msg-check-\w+","state":"not-accepted"\}$/],
  },
  {
    broken: "receipt-accepted-other",
    fails: "channel.lifecycle",
    headline:
      /^channel\.receipt of a delivery just made answered state accepted for msgId msg-other, not accepted for msg-check-\w+$/,
  },
  {
    broken: "watch-restarted",
    fails: "channel.lifecycle",
    headline: /^the watch ended with watch\/restarted, not watch\/settled$/,
    evidence: [/^\{"incarnation":1,"watchId":"cw\d+-1"\}$/],
  },
  {
    broken: "settle-at-baseline",
    fails: "channel.lifecycle",
    headline: /^watch\/settled reports runs 0, not past 0$/,
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

/** The fixture installed as mu-plugin-cfx and registered, broken as asked. */
const registered = (broken?: string) => registerFixture("channel-plugin.mjs", "cfx", broken);

describe.concurrent("mu plugin check on a stand-alone channel plugin", () => {
  it("the correct plugin passes every channel check", async () => {
    const w = await registered();
    try {
      const r = await checking(CHECK, w.env);
      expect(r.stderr).toBe("");
      expect(r.code, r.stdout).toBe(0);
      const got = r.got;
      expect(Object.keys(got)).toEqual([...CHECK_IDS]);
      for (const id of CHECK_IDS)
        expect([id, got[id]?.mark]).toEqual([id, RUNS.has(id) ? "ok" : "skip"]);
      // The second turn is looked for over the first one's time and half a
      // second more: never less than the half second.
      const dedupe =
        /^msgId \S+ sent three times \(twice again, at once and after its turn\): the first reply each time, one turn \(runs (\d+) to (\d+), none more in (\d+) ms\)$/.exec(
          got["channel.dedupe"]?.detail ?? "",
        );
      expect(dedupe, got["channel.dedupe"]?.detail).not.toBeNull();
      expect(Number(dedupe?.[2])).toBe(Number(dedupe?.[1]) + 1);
      expect(Number(dedupe?.[3])).toBeGreaterThanOrEqual(500);
      expect(got["channel.receipts"]?.detail).toMatch(
        /^a receipt for msgId msg-check-\w+, never sent, answered not-accepted$/,
      );
      expect(got["channel.controls"]?.detail).toBe(
        "fresh; a send with expectIncarnation 1 refused, nothing delivered; command; interrupt; abort; answer",
      );
      // Each passing line says what it exercised, in words a reader can check.
      expect(got["channel.lifecycle"]?.detail).toMatch(
        /^delivered msg-check-[0-9a-f]{12}, receipt accepted with that msgId, the watch settled at runs=1$/,
      );
      expect(got["channel.turns"]?.detail).toBe(
        "two sends answered baselines 0 and 1; runs went 0, 1, 2; readStates and lastRun agree, two turns back as one",
      );
      expect(got["channel.watch"]?.detail).toBe(
        "a watch on a settled turn answered first, then one watch/settled (runs 1); a watch ended by $/cancel sent nothing as runs reached 2",
      );
      expect(got.handshake?.detail).toBe(
        "protocol 1, cfx 0.1.0, instance fixture, seams job, channel: valid, digest matches, loads with channel; the same on two starts",
      );
      // What the run made, it says it removed; what it cannot remove, it names.
      expect(r.stdout).toMatch(/^cleaned: stopped every job it started \(\d+\)$/m);
      expect(r.stdout).toMatch(
        /^left: {4}the plugin's record of the keys mu-check-[0-9a-f]{8}-\* \(the protocol has no call to forget a job, and the plugin declares no link to remove it through\)$/m,
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
        expectFailed(r, "cfx", [b.fails], b.headline);
        if ("evidence" in b) {
          expectEvidence(r.stdout, b.fails, b.evidence);
        }
        if ("evidenceStarts" in b) {
          expectEvidence(r.stdout, b.fails, b.evidenceStarts, true);
        }
      } finally {
        w.done();
      }
    },
    120_000,
  );

  // mu's connection refuses a second notification of one watch, so the
  // check's own count never sees it: the watch check and messages both fail.
  it("a watch that notifies twice fails channel.watch and messages", async () => {
    const w = await registered("settled-twice");
    try {
      const r = await checking(CHECK, w.env);
      expectFailed(
        r,
        "cfx",
        ["channel.watch", "messages"],
        /^(channel\.watch not sent: the plugin sent an invalid message \(watch\/settled for no open watch 'cw\d+-1'\)|1 invalid message in \d+ lines from \d+ starts)$/,
      );
    } finally {
      w.done();
    }
  }, 120_000);

  // An at-start kind's first prompt goes with job.start: the checks wait for
  // its turn, never send a first prompt of their own, and judge its receipt.
  it("an at-start kind passes every channel check, the first turn counted from the start", async () => {
    const w = await registerFixture("channel-plugin.mjs", "cfx", undefined, ["--at-start"]);
    try {
      const r = await checking(CHECK, w.env);
      expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
      for (const id of CHECK_IDS)
        expect([id, r.got[id]?.mark]).toEqual([id, RUNS.has(id) ? "ok" : "skip"]);
      expect(r.got["channel.lifecycle"]?.detail).toMatch(
        /^delivered msg-check-[0-9a-f]{12}, receipt accepted with that msgId, the watch settled at runs=1$/,
      );
      expect(r.got["channel.turns"]?.detail).toBe(
        "two sends answered baselines 1 and 2; runs went 1, 2, 3; readStates and lastRun agree, two turns back as one",
      );
    } finally {
      w.done();
    }
  }, 120_000);

  it("an at-start kind's first prompt is judged by its receipt", async () => {
    const w = await registerFixture("channel-plugin.mjs", "cfx", "receipt-refused", ["--at-start"]);
    try {
      const r = await checking(CHECK, w.env);
      expectFailed(
        r,
        "cfx",
        ["channel.lifecycle"],
        /^channel\.receipt of a delivery just made answered state not-accepted for msgId (msg-check-\w+), not accepted for \1$/,
      );
    } finally {
      w.done();
    }
  }, 120_000);

  // mu never resends to such a channel nor asks it for a receipt, so the
  // checks of both promises have nothing to prove and say why.
  // A reply may leave its msgId out; the checks then judge the channel alone.
  // What a plugin logs on stderr is not on the wire, even a copy of a
  // notification: the watch checks count stdout alone.
  it("a channel that declares neither dedupe nor receipts has those two checks skipped; replies without msgId, and stderr copies of every line, pass", async () => {
    const w = await registerFixture("channel-plugin.mjs", "cfx", undefined, [
      "--no-resend-caps",
      "--no-reply-msgid",
      "--echo-stderr",
    ]);
    try {
      const r = await checking(CHECK, w.env);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(r.got["channel.dedupe"]).toEqual({
        mark: "skip",
        detail: "the channel declares dedupe: none, so mu never resends a delivery",
      });
      expect(r.got["channel.receipts"]).toEqual({
        mark: "skip",
        detail: "the channel declares receipt: none, so mu never asks for a receipt",
      });
      for (const id of CHECK_IDS)
        if (!["channel.dedupe", "channel.receipts"].includes(id))
          expect([id, r.got[id]?.mark]).toEqual([id, RUNS.has(id) ? "ok" : "skip"]);
    } finally {
      w.done();
    }
  }, 120_000);

  // On a loaded machine a turn can settle before the check's next call; the
  // fixture's turns settling at once stand for that, deterministically.
  it("a watch on a turn already settled is channel.watch's case alone, however fast turns settle", async () => {
    const w = await registered("settle-first");
    try {
      const r = await checking(CHECK, { ...w.env, FIXTURE_TURN_MS: "0" });
      expectFailed(
        r,
        "cfx",
        ["channel.watch"],
        (BREAKS.find((b) => b.broken === "settle-first") ?? BREAKS[0]).headline,
      );
    } finally {
      w.done();
    }
  }, 120_000);
});
