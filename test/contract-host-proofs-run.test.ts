import { describe, expect, it } from "vitest";
import { runHostProofs } from "../host/contract/host-proofs-run.js";
import type { CheckId, Outcome, Verdict } from "../host/contract/verdict.js";
import type { InitializeResult } from "../host/protocol/declaration.js";
import { checkContext, FakeProvider, perTest } from "./fake-provider.js";

// The host checks after the replay, in-process against fake-provider.ts:
// their order, the caps each is given, and which of them stand down when the
// replay failed.

const provider = perTest(() => new FakeProvider());

async function proofs(replay: "pass" | "fail" | undefined, acquire?: object) {
  const p = provider();
  const hello = { seams: acquire ? { host: { acquire } } : {} } as unknown as InitializeResult;
  const ran: [CheckId, Outcome][] = [];
  const handed: CheckId[] = [];
  // A failed check before the replay's verdict is no reason to stand down.
  const out = [
    { id: "host.idempotency", result: "fail" },
    ...(replay ? [{ id: "host.replay", result: replay }] : []),
  ] as Verdict[];
  await runHostProofs(
    checkContext(),
    async (id, body) => {
      ran.push([id, await body()]);
    },
    (id, fn) => () => {
      handed.push(id);
      return fn(p.session(), hello);
    },
    out,
    { size: "s" },
  );
  // each check is handed to the host's runner under its own id
  expect(handed).toEqual(ran.map(([id]) => id));
  return { p, ran };
}

describe("the host checks after the replay", () => {
  it("run gone, facts, errors and in-flight, in that order, with the author's params", async () => {
    const { p, ran } = await proofs("pass", { lookup: true, fenceKey: false, inFlightMs: 1000 });
    expect(ran.map(([id, o]) => `${id} ${o.result}`)).toEqual([
      "host.gone pass",
      "host.facts pass",
      "host.errors pass",
      "host.inflight pass",
    ]);
    expect(p.calls.find((c) => c.method === "host.acquire")?.params.params).toEqual({ size: "s" });
    // facts with lookup declared look the machine up
    expect(ran[1][1].detail).toMatch(/^neither the acquire nor the status/);
    expect(p.calls.some((c) => c.method === "host.lookup")).toBe(true);
  });

  it("give a provider with no acquire caps neither lookup nor a bound", async () => {
    const { p, ran } = await proofs(undefined, undefined);
    expect(ran.map(([id, o]) => `${id} ${o.result}`)).toEqual([
      "host.gone pass",
      "host.facts pass",
      "host.errors pass",
      "host.inflight skip",
    ]);
    expect(p.calls.some((c) => c.method === "host.lookup")).toBe(false);
    expect(ran[3][1].detail).toBe("the acquire declares no inFlightMs");
  });

  it("stand down where the replay failed, all but the errors check", async () => {
    const { ran } = await proofs("fail", { lookup: true, fenceKey: false, inFlightMs: 1000 });
    const why =
      "host.replay did not pass, and this check reads the machine from new processes as it does";
    expect(ran).toEqual([
      ["host.gone", { result: "skip", detail: why, evidence: [] }],
      ["host.facts", { result: "skip", detail: why, evidence: [] }],
      ["host.errors", expect.objectContaining({ result: "pass" })],
      ["host.inflight", { result: "skip", detail: why, evidence: [] }],
    ]);
  });
});
