import { describe, expect, it } from "vitest";
import { observation, parseState, type State, TEXT_CAP } from "../plugins/ssh/channel-state.js";
import type { Answer } from "../plugins/ssh/job.js";

// The ssh plugin reads a channel's state from the remote's JOBCTL answer:
// a line `MU-CH-STATE cur inc runs status since code size why`, then the
// turn's first stderr line, then its output cut at the cap. What a watch
// reports is made from that, so each field must land where mu reads it.

function answer(fields: string, err = "", out: Buffer | string = ""): Answer {
  const raw = Buffer.concat([Buffer.from(`MU-CH-STATE ${fields}\n${err}\n`), Buffer.from(out)]);
  return { tag: "CH-STATE", fields: fields.split(" "), raw, end: raw.length };
}

describe("parseState", () => {
  it("reads a state with no settled turn", () => {
    expect(parseState(answer("3 2 0 idle 1700 - 0 -"))).toEqual({
      cur: 3,
      inc: 2,
      runs: 0,
      status: "idle",
      since: 1700,
    });
    expect(parseState(answer("1 1 0 busy 5 - 0 -"))?.status).toBe("busy");
    expect(parseState(answer("1 1 0 starting 5 - 0 -"))?.status).toBe("unknown");
  });

  it("reads a settled turn's code, first stderr line and output", () => {
    expect(parseState(answer("1 1 2 idle 9 3 5 -", "boom", "hello"))).toEqual({
      cur: 1,
      inc: 1,
      runs: 2,
      status: "idle",
      since: 9,
      code: 3,
      err: "boom",
      truncated: false,
      text: "hello",
    });
  });

  it("keeps why only for a turn killed on purpose", () => {
    expect(parseState(answer("1 1 1 idle 9 137 0 aborted"))?.why).toBe("aborted");
    expect(parseState(answer("1 1 1 idle 9 137 0 interrupted"))?.why).toBe("interrupted");
    expect(parseState(answer("1 1 1 idle 9 137 0 crashed"))?.why).toBeUndefined();
  });

  it("marks output past the cap as truncated and drops a character cut in two", () => {
    const kept = Buffer.concat([
      Buffer.from("a".repeat(TEXT_CAP - 1)),
      Buffer.from("é").subarray(0, 1),
    ]);
    const s = parseState(answer(`1 1 1 idle 9 0 ${TEXT_CAP + 10} -`, "", kept));
    expect(s?.truncated).toBe(true);
    expect(s?.text).toBe("a".repeat(TEXT_CAP - 1));
    // At the cap exactly, nothing was cut: a stray byte stays as the decoder makes it.
    const whole = parseState(answer(`1 1 1 idle 9 0 ${TEXT_CAP} -`, "", kept));
    expect(whole?.truncated).toBe(false);
    expect(whole?.text?.endsWith("\uFFFD")).toBe(true);
  });

  it("is undefined for any other answer", () => {
    expect(parseState({ ...answer("1 1 0 idle 1 - 0 -"), tag: "CH-NOJOB" })).toBeUndefined();
  });
});

describe("observation", () => {
  const state = (more: Partial<State> = {}) => ({
    cur: 2,
    inc: 2,
    runs: 4,
    status: "idle",
    since: 77,
    ...more,
  });

  it("is settled only past the runs the watch was opened after", () => {
    expect(observation(state(), 3)).toEqual({
      status: "idle",
      settled: true,
      since: 77,
      runs: 4,
      incarnation: 2,
    });
    expect(observation(state(), 4).settled).toBe(false);
  });

  it("carries the turn's text, and says when it was cut", () => {
    expect(observation(state({ text: "hi", truncated: false }), 3)).toMatchObject({
      lastText: "hi",
    });
    expect(observation(state({ text: "hi", truncated: false }), 3)).not.toHaveProperty(
      "lastTextTruncated",
    );
    expect(observation(state({ text: "hi", truncated: true }), 3).lastTextTruncated).toBe(true);
  });

  it("names why a turn failed: aborted, interrupted, or the harness's exit", () => {
    const err = (more: Partial<State>) => observation(state(more), 3).lastError;
    expect(err({ why: "aborted", code: 137 })).toBe(
      "aborted: mu agent abort killed the harness mid-turn",
    );
    expect(err({ why: "interrupted", code: 137 })).toBe(
      "interrupted: the next message killed the harness mid-turn",
    );
    expect(err({ code: 2, err: "no such file" })).toBe("the harness exited 2: no such file");
    expect(err({ code: 2, err: "" })).toBe("the harness exited 2");
    expect(err({ code: 0, err: "warning" })).toBeUndefined();
    expect(err({})).toBeUndefined();
  });
});
