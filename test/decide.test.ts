import { describe, expect, it } from "vitest";
import {
  type DeliveryFacts,
  decideFirst,
  decideGuard,
  decideLookup,
  decideReceipt,
  type Facts,
  type LookupAnswer,
  noneForGood,
} from "../host/effects/decide.js";
import { RULE_TABLE } from "../host/effects/rule-table.js";
import type { KeyCaps } from "../host/protocol/declaration.js";

// Table-driven: each case is one situation and the rule-table row it must
// land on. Every row the decisions can produce appears here.

const gone: Facts = {
  instance: "a",
  writerAlive: false,
  resolverAlive: false,
  groupEmpty: true,
  now: 100_000,
};
const intent = (method: string, writtenAt = 90_000) => ({ method, instance: "a", writtenAt });
const lookup: KeyCaps = { lookup: true, fenceKey: true };
const unfenced: KeyCaps = { lookup: true, fenceKey: false, inFlightMs: 30_000 };
const dedupe: KeyCaps = {
  lookup: false,
  fenceKey: false,
  // Two minutes: a resend 10 s in fits with its 65 s span; one 70 s in does not, though the window is still open.
  dedupe: { exact: true, windowMs: 120_000 },
};

describe("decideGuard", () => {
  it.each([
    [false, false, undefined],
    [true, false, "guard.writer-alive"],
    [false, true, "guard.resolver-alive"],
    [true, true, "guard.writer-alive"],
  ] as const)("writer alive %s, resolver alive %s: %s", (writerAlive, resolverAlive, row) => {
    expect(decideGuard({ writerAlive, resolverAlive })).toBe(row);
  });
});

describe("decideFirst", () => {
  const cases: [
    string,
    string,
    KeyCaps | undefined,
    Partial<Facts>,
    number | undefined,
    string,
    string,
  ][] = [
    [
      "writer alive",
      "host.acquire",
      lookup,
      { writerAlive: true },
      undefined,
      "guard.writer-alive",
      "nothing",
    ],
    [
      "resolver alive",
      "host.acquire",
      lookup,
      { resolverAlive: true },
      undefined,
      "guard.resolver-alive",
      "nothing",
    ],
    [
      "the writer outranks the instance",
      "host.release",
      lookup,
      { writerAlive: true, instance: "b" },
      undefined,
      "guard.writer-alive",
      "nothing",
    ],
    [
      "instance changed",
      "host.acquire",
      lookup,
      { instance: "b" },
      undefined,
      "fence.instance",
      "nothing",
    ],
    [
      "instance changed, release",
      "host.release",
      lookup,
      { instance: "b" },
      undefined,
      "fence.instance",
      "nothing",
    ],
    ["release pending", "host.release", lookup, {}, undefined, "release.reissue", "resend"],
    ["stop pending", "job.stop", undefined, {}, undefined, "stop.reissue", "resend"],
    ["acquire with lookup", "host.acquire", lookup, {}, undefined, "keyed", "lookup"],
    ["start with lookup", "job.start", lookup, {}, undefined, "keyed", "lookup"],
    [
      "acquire, dedupe, inside",
      "host.acquire",
      dedupe,
      {},
      undefined,
      "acquire.dedupe.inside",
      "resend",
    ],
    [
      "acquire, dedupe, expired",
      "host.acquire",
      dedupe,
      {},
      30_000,
      "acquire.dedupe.expired",
      "nothing",
    ],
    ["start, dedupe, inside", "job.start", dedupe, {}, undefined, "start.dedupe.inside", "resend"],
    ["start, dedupe, expired", "job.start", dedupe, {}, -30_000, "start.dedupe.expired", "nothing"],
    [
      "start, dedupe, open but too late for the resend to land",
      "job.start",
      dedupe,
      {},
      30_000,
      "start.dedupe.expired",
      "nothing",
    ],
  ];
  it.each(cases)("%s", (_what, method, caps, facts, writtenAt, row, ask) => {
    const d = decideFirst(intent(method, writtenAt), caps, { ...gone, ...facts });
    expect([d.row, d.ask]).toEqual([row, ask]);
  });

  it("asks a fenced lookup only when the plugin can fence the key", () => {
    expect(decideFirst(intent("host.acquire"), lookup, gone)).toMatchObject({ fence: true });
    expect(decideFirst(intent("host.acquire"), unfenced, gone)).toMatchObject({ fence: false });
  });

  it("the window, less the resend's span, is exclusive at its end", () => {
    // now 100 s, window 120 s, span 65 s: written after 45 s is the last that fits.
    expect(decideFirst(intent("host.acquire", 45_000), dedupe, gone).row).toBe(
      "acquire.dedupe.expired",
    );
    expect(decideFirst(intent("host.acquire", 45_001), dedupe, gone).row).toBe(
      "acquire.dedupe.inside",
    );
  });
});

describe("decideLookup", () => {
  const base = { ...gone, fenced: true, inFlightMs: undefined, fileHandle: false };
  const cases: [string, string, LookupAnswer, Partial<typeof base>, string][] = [
    ["found", "host.acquire", { found: { handle: "h" } }, {}, "acquire.lookup.found"],
    ["pending", "host.acquire", { pending: true }, {}, "acquire.lookup.pending"],
    ["unknown", "host.acquire", { unknown: "api down" }, {}, "acquire.lookup.unknown"],
    ["none, fenced, all gone", "host.acquire", { none: true }, {}, "acquire.lookup.none.proven"],
    [
      "none, writer alive",
      "host.acquire",
      { none: true },
      { writerAlive: true },
      "acquire.lookup.none.unproven",
    ],
    [
      "none, plugin group alive",
      "host.acquire",
      { none: true },
      { groupEmpty: false },
      "acquire.lookup.none.unproven",
    ],
    [
      "none, unfenced, in flight",
      "host.acquire",
      { none: true },
      { fenced: false, inFlightMs: 30_000 },
      "acquire.lookup.none.unproven",
    ],
    [
      "none, unfenced, no bound",
      "host.acquire",
      { none: true },
      { fenced: false },
      "acquire.lookup.none.unproven",
    ],
    [
      "none, unfenced, waited",
      "host.acquire",
      { none: true },
      { fenced: false, inFlightMs: 5_000 },
      "acquire.lookup.none.proven",
    ],
    ["start found", "job.start", { found: { handle: "h" } }, {}, "start.lookup.found"],
    ["start pending", "job.start", { pending: true }, {}, "start.lookup.pending"],
    ["start unknown", "job.start", { unknown: "?" }, {}, "start.lookup.unknown"],
    ["start none proven", "job.start", { none: true }, {}, "start.lookup.none.proven"],
    [
      "start none unproven",
      "job.start",
      { none: true },
      { groupEmpty: false },
      "start.lookup.none.unproven",
    ],
    [
      "file kind never acts on none",
      "job.start",
      { none: true },
      { fileHandle: true },
      "start.lookup.none.file",
    ],
  ];
  it.each(cases)("%s", (_what, method, answer, facts, row) => {
    expect(decideLookup(method, answer, intent(method), { ...base, ...facts })).toBe(row);
  });

  it("every row it returns is a row of the table", () => {
    const ids = new Set(RULE_TABLE.map((r) => r.id));
    for (const [, method, answer, facts] of cases) {
      expect(ids.has(decideLookup(method, answer, intent(method), { ...base, ...facts }))).toBe(
        true,
      );
    }
  });
});

describe("noneForGood: a none no later lookup can prove, so only a person can end it", () => {
  const base = { ...gone, fenced: true, inFlightMs: undefined, fileHandle: true };
  const none: LookupAnswer = { none: true };
  const cases: [string, LookupAnswer, Partial<typeof base>, boolean][] = [
    ["none, fenced, all gone", none, {}, true],
    ["none, unfenced, no bound ever passes", none, { fenced: false }, true],
    ["none, unfenced, bound passed", none, { fenced: false, inFlightMs: 5_000 }, true],
    ["none, unfenced, still in flight", none, { fenced: false, inFlightMs: 30_000 }, false],
    // A fence stops a new start, not one already running that writes its handle late.
    ["none, fenced, a file kind still in flight", none, { inFlightMs: 30_000 }, false],
    [
      "none, fenced, a reply kind still in flight",
      none,
      { inFlightMs: 30_000, fileHandle: false },
      true,
    ],
    ["none, plugin group alive", none, { groupEmpty: false }, false],
    ["none, writer alive", none, { writerAlive: true }, false],
    ["pending", { pending: true }, {}, false],
    ["unknown", { unknown: "?" }, {}, false],
    ["found", { found: { handle: "h" } }, {}, false],
  ];
  it.each(cases)("%s", (_what, answer, facts, forGood) => {
    expect(noneForGood(answer, intent("job.start"), { ...base, ...facts })).toBe(forGood);
  });
});

describe("deliveries", () => {
  const facts = (over: Partial<DeliveryFacts>): DeliveryFacts => ({
    receiptExact: false,
    dedupeExact: false,
    hasMsgId: true,
    hasText: true,
    newerWritten: false,
    jobEnded: false,
    ...over,
  });
  it.each([
    ["channel.send", { receiptExact: true }, "delivery.receipt"],
    ["channel.interrupt", { receiptExact: true, dedupeExact: true }, "delivery.receipt"],
    // abort, answer and command carry no msgId: no receipt or dedupe can know them.
    [
      "channel.abort",
      { receiptExact: true, hasMsgId: false, dedupeExact: true },
      "delivery.no-msgid",
    ],
    ["channel.command", { hasMsgId: false, dedupeExact: true }, "delivery.no-msgid"],
    ["channel.send", { dedupeExact: true }, "delivery.resend"],
    ["channel.send", { dedupeExact: true, newerWritten: true }, "delivery.superseded"],
    ["channel.answer", { hasMsgId: false }, "delivery.no-msgid"],
    // Nothing could ever make such a resend safe again: it is let go.
    ["channel.command", { newerWritten: true }, "delivery.superseded"],
    ["channel.command", {}, "unresolvable"],
    // A delivery to a job that ended is let go, even where a receipt could be asked.
    ["channel.send", { receiptExact: true, jobEnded: true }, "delivery.job-ended"],
    [
      "channel.answer",
      { hasMsgId: false, dedupeExact: true, jobEnded: true },
      "delivery.job-ended",
    ],
  ] as const)("%s with %j: %s", (method, over, row) => {
    expect(decideFirst(intent(method), undefined, gone, facts(over)).row).toBe(row);
  });

  it("the guards and the fence come before any delivery row", () => {
    const d = facts({ receiptExact: true });
    expect(
      decideFirst(intent("channel.send"), undefined, { ...gone, writerAlive: true }, d).row,
    ).toBe("guard.writer-alive");
    expect(decideFirst(intent("channel.send"), undefined, { ...gone, instance: "b" }, d).row).toBe(
      "fence.instance",
    );
  });

  it.each([
    [{ state: "accepted", id: "m1" }, "delivery.receipt.accepted"],
    [{ state: "accepted", id: "m2" }, "delivery.receipt.other"],
    [{ state: "not-accepted", id: "m1" }, "delivery.receipt.other"],
    [{ state: "unreachable", id: "m1" }, "delivery.receipt.other"],
  ] as const)("receipt %j: %s", (answer, row) => {
    expect(decideReceipt(answer, "m1")).toBe(row);
  });

  // not-accepted proves the message never arrived: resent where exact dedupe
  // makes a copy still on its way harmless and nothing newer could be
  // overtaken; else settled as not delivered once nothing can still carry it.
  it.each([
    [{ dedupeExact: true }, true, "delivery.receipt.not-accepted.resend"],
    [{ dedupeExact: true }, false, "delivery.receipt.not-accepted.resend"],
    [{ dedupeExact: true, newerWritten: true }, true, "delivery.receipt.not-accepted.settled"],
    [{ dedupeExact: true, newerWritten: true }, false, "delivery.receipt.other"],
    [{ dedupeExact: true, hasText: false }, true, "delivery.receipt.not-accepted.settled"],
    [{ dedupeExact: false }, true, "delivery.receipt.not-accepted.settled"],
    [{ dedupeExact: false }, false, "delivery.receipt.other"],
  ] as const)("not-accepted with %j, group gone %s: %s", (over, groupEmpty, row) => {
    const d = facts(over);
    expect(decideReceipt({ state: "not-accepted", id: "m1" }, "m1", d, groupEmpty)).toBe(row);
    // Another msgId, or unreachable, is never a proof of anything.
    expect(decideReceipt({ state: "not-accepted", id: "m2" }, "m1", d, groupEmpty)).toBe(
      "delivery.receipt.other",
    );
    expect(decideReceipt({ state: "unreachable", id: "m1" }, "m1", d, groupEmpty)).toBe(
      "delivery.receipt.other",
    );
  });
});

describe("the rule table", () => {
  it("every row is reached by some decision, at-start rows through the job rules", async () => {
    const { jobRules } = await import("../host/jobs/job-rules.js");
    const reached = new Set<string>();
    const capsList: (KeyCaps | undefined)[] = [lookup, unfenced, dedupe, undefined];
    const factsList: Partial<Facts>[] = [
      {},
      { writerAlive: true },
      { resolverAlive: true },
      { instance: "b" },
      { groupEmpty: false },
      { now: 10_000_000 },
    ];
    const answers: LookupAnswer[] = [
      { found: {} },
      { pending: true },
      { none: true },
      { unknown: "?" },
    ];
    for (const method of ["host.acquire", "host.release", "job.start", "job.stop"]) {
      for (const caps of capsList) {
        for (const f of factsList) {
          const first = decideFirst(intent(method), caps, { ...gone, ...f });
          reached.add(first.row);
          if (first.ask !== "lookup") continue;
          for (const answer of answers) {
            for (const fileHandle of [false, true]) {
              for (const fenced of [true, false]) {
                reached.add(
                  decideLookup(method, answer, intent(method), {
                    ...gone,
                    ...f,
                    fenced,
                    inFlightMs: 30_000,
                    fileHandle,
                  }),
                );
              }
            }
          }
        }
      }
    }
    for (const receiptExact of [true, false])
      for (const dedupeExact of [true, false])
        for (const newerWritten of [true, false])
          for (const hasMsgId of [true, false])
            for (const jobEnded of [true, false])
              reached.add(
                decideFirst(intent("channel.send"), undefined, gone, {
                  receiptExact,
                  dedupeExact,
                  hasMsgId,
                  hasText: true,
                  newerWritten,
                  jobEnded,
                }).row,
              );
    reached.add(decideReceipt({ state: "accepted", id: "m" }, "m"));
    reached.add(decideReceipt({ state: "not-accepted", id: "m" }, "m"));
    for (const dedupeExact of [true, false])
      reached.add(
        decideReceipt(
          { state: "not-accepted", id: "m" },
          "m",
          { dedupeExact, newerWritten: false, hasText: true },
          true,
        ),
      );
    const atStart = {
      method: "job.start",
      params: { spec: { workstream: "w", name: "a", firstPrompt: { text: "t", msgId: "m" } } },
    } as never;
    for (const row of [...reached]) reached.add(jobRules.rowName(atStart, row));
    const missing = RULE_TABLE.map((r) => r.id).filter((id) => !reached.has(id));
    expect(missing).toEqual([]);
  });
});
