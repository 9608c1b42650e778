import { afterEach, describe, expect, it, vi } from "vitest";
import { Session } from "../host/contract/session.js";
import { AGENT_CHECKS, type AgentOptions, runAgentCheck } from "../host/contract/suite-jobs.js";
import type { CheckId } from "../host/contract/verdict.js";
import type { InitializeResult } from "../host/protocol/declaration.js";
import { checkContext } from "./fake-provider.js";

// Which job and channel checks run, and why the others are skipped, decided
// before any plugin starts; in-process. The checks themselves are tested
// against plugins on the wire in test/contract-job-fixture.test.ts and
// test/contract-channel-fixture.test.ts.

const hello = (seams: object) => ({ instance: "i", seams }) as unknown as InitializeResult;
const JOB = {
  checks: [],
  kind: "k",
  start: { lookup: true, fenceKey: true, inFlightMs: 1000 },
  honours: { command: true },
};
const CHANNEL = { name: "c", caps: { dedupe: "exact", receipt: "exact" } };
const FULL = hello({ job: JOB, channel: CHANNEL });
const opts = (seams: string[], failed: CheckId[] = []): AgentOptions => ({
  seams: new Set(seams),
  params: {},
  repeat: 1,
  failed: (id) => failed.includes(id),
});
const check = (id: CheckId) => {
  const c = AGENT_CHECKS.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id}`);
  return c;
};
const skipped = async (id: CheckId, h: InitializeResult, o: AgentOptions) => {
  const out = await runAgentCheck(checkContext(), o, check(id), h);
  expect(out.result).toBe("skip");
  return out.detail;
};

describe("the job and channel checks", () => {
  it("run in this order, each under its seam", () => {
    expect(AGENT_CHECKS.map((c) => `${c.seam} ${c.id}`)).toEqual([
      "job job.lifecycle",
      "job job.idempotency",
      "job job.replay",
      "job job.inflight",
      "job job.attach",
      "job job.checkSteps",
      "job job.spec",
      "channel channel.lifecycle",
      "channel channel.turns",
      "channel channel.dedupe",
      "channel channel.receipts",
      "channel channel.watch",
      "channel channel.controls",
    ]);
  });

  it("are skipped without a job seam, and the channel's without a channel seam", async () => {
    expect(await skipped("job.lifecycle", hello({}), opts(["job"]))).toBe(
      "the plugin declares no job seam",
    );
    expect(await skipped("channel.turns", hello({ job: JOB }), opts(["job", "channel"]))).toBe(
      "the plugin declares no channel seam",
    );
  });

  it("are skipped where the declaration switches off what they need", async () => {
    const all = opts(["job", "channel"]);
    expect(
      await skipped("job.inflight", hello({ job: { ...JOB, start: { lookup: false } } }), all),
    ).toBe("a start killed in flight is settled by lookup; no lookup declared");
    expect(await skipped("job.spec", hello({ job: { ...JOB, honours: {} } }), all)).toMatch(
      /^the kind does not honour a command/,
    );
    const noCaps = hello({
      job: JOB,
      channel: { name: "c", caps: { dedupe: "none", receipt: "none" } },
    });
    expect(await skipped("channel.dedupe", noCaps, all)).toBe(
      "the channel declares dedupe: none, so mu never resends a delivery",
    );
    expect(await skipped("channel.receipts", noCaps, all)).toBe(
      "the channel declares receipt: none, so mu never asks for a receipt",
    );
  });

  it("start real jobs only for the seam the author named", async () => {
    expect(await skipped("job.lifecycle", FULL, opts([]))).toBe(
      "it starts a real job: add --seam job and the --param values it needs",
    );
    expect(await skipped("channel.watch", FULL, opts(["job"]))).toBe(
      "it starts a real job: add --seam channel and the --param values it needs",
    );
  });

  it("run a provider's jobs only with --seam host too", async () => {
    const provider = hello({ job: JOB, channel: CHANNEL, host: {} });
    expect(await skipped("job.lifecycle", provider, opts(["job"]))).toBe(
      "a provider's jobs run on machines it acquired; add --seam host too",
    );
  });

  it("skip job.inflight when job.replay failed, and nothing else for it", async () => {
    expect(await skipped("job.inflight", FULL, opts(["job"], ["job.replay"]))).toBe(
      "job.replay did not pass, and this check asks the same of new processes as it does",
    );
    expect(AGENT_CHECKS.filter((c) => c.after).map((c) => `${c.id} after ${c.after}`)).toEqual([
      "job.inflight after job.replay",
    ]);
  });

  it("hand each body the session, declaration and options it is called with", async () => {
    // A session that answers nothing: each body's first call to the plugin fails, naming it.
    const calls: string[] = [];
    const s = {
      hello: { instance: "i" },
      call: async (method: string) => {
        calls.push(method);
        throw new Error(`no answer to ${method}`);
      },
      again: async () => s,
      kill: async () => {},
      close: async () => {},
      now: () => 0,
      sleep: async () => {},
    } as unknown as Session;
    for (const c of AGENT_CHECKS) {
      calls.length = 0;
      const out = await c
        .body(checkContext(), s, FULL, opts(["job", "channel"]))
        .catch((e: unknown) => e);
      expect(out, c.id).toBeDefined();
      expect(calls.length, c.id).toBeGreaterThan(0);
    }
  });

  it("a check with nothing against it starts the plugin for its own seam, named after it, and closes it", async () => {
    const opened: unknown[][] = [];
    let closed = 0;
    let asked = 0;
    const session = {
      hello: { instance: "i" },
      now: () => 0,
      sleep: async () => {},
      again: async () => session,
      kill: async () => {},
      call: async () => {
        asked++;
        throw new Error("no answer");
      },
      close: async () => {
        closed++;
      },
    } as unknown as Session;
    vi.spyOn(Session, "open").mockImplementation(async (...a) => {
      opened.push(a.slice(1));
      return session;
    });
    const provider = hello({ job: JOB, channel: CHANNEL, host: {} });
    const ctx = checkContext();
    for (const [id, h, seams] of [
      ["job.inflight", FULL, ["job"]],
      ["channel.watch", FULL, ["channel"]],
      ["job.lifecycle", provider, ["job", "host"]],
    ] as const) {
      await runAgentCheck(ctx, opts([...seams], ["job.lifecycle"]), check(id), h).catch(() => {});
    }
    expect(opened).toEqual([
      ["job.inflight", ["job"]],
      ["channel.watch", ["channel"]],
      ["job.lifecycle", ["job"]],
    ]);
    expect(closed).toBeGreaterThanOrEqual(3);
    // each body ran: its calls reached the session
    expect(asked).toBeGreaterThanOrEqual(3);
    // options without a record of failures skip nothing for it
    opened.length = 0;
    const { failed: _f, ...bare } = opts(["job"]);
    await runAgentCheck(ctx, bare, check("job.inflight"), FULL).catch(() => {});
    expect(opened).toEqual([["job.inflight", ["job"]]]);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});
