import { describe, expect, it } from "vitest";
import { harnessArgs, plugin, useSshd } from "./ssh-kit.js";

// A delivery wakes the job's idle loop with a signal. The same signal
// arriving while a turn runs must not end the loop's wait on that turn:
// the turn keeps its own exit code and text, and the next turn follows it.

useSshd();

describe("mu-plugin-ssh: a delivery during a turn", { timeout: 180_000 }, () => {
  it("leaves the running turn's exit and text its own, and runs the next after it", async () => {
    const w = plugin(harnessArgs);
    await w.hello();
    const key = "job-wake";
    w.target = {
      host: { name: "box" },
      job: { kind: "ssh", key },
      agent: { workstream: "main", name: "a", incarnation: 1 },
    };
    const spec = { workstream: "main", name: "a", cwd: ".", env: { FAKE_THINK_S: "1.5" } };
    expect((await w.call("job.start", { key, spec })).error).toBeUndefined();
    const send = (text: string, msgId: string) =>
      w.call("channel.send", { text, msgId, mode: "followUp", force: false, firstPrompt: false });
    await send("first", "m1");
    for (;;) {
      const r = (await w.call("channel.readStates", { targets: ["main/a"] })).result as Record<
        string,
        { state: string }
      >;
      if (r["main/a"]?.state === "busy") break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect((await send("second", "m2")).error).toBeUndefined();
    const w1 = (await w.call("channel.watch", { afterRuns: 0 })).result as { watchId: string };
    const first = (await w.note(w1.watchId)).params.observation as Record<string, unknown>;
    expect(first).toMatchObject({ runs: 1, lastText: expect.stringMatching(/^answer to: first/) });
    expect(first.lastError).toBeUndefined();
    const w2 = (await w.call("channel.watch", { afterRuns: 1 })).result as { watchId: string };
    const second = (await w.note(w2.watchId)).params.observation as Record<string, unknown>;
    expect(second).toMatchObject({
      runs: 2,
      lastText: expect.stringMatching(/^answer to: second/),
    });
    expect(second.lastError).toBeUndefined();
    expect((await w.call("job.stop", { key })).result).toBeNull();
    await w.close();
  });
});
