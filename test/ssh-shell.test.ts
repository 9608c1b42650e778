import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempState } from "./helpers.js";
import { git, muAt, oneCommitCheckout, plugin, pluginArgv, sshd, useSshd } from "./ssh-kit.js";

// mu-plugin-ssh against a remote whose shell is not what a script expects:
// it prints a greeting before every command (as a start-up file with an
// `echo` does), and `~` is the remote root, where a harness script lives.

useSshd({ banner: "Welcome to box", homeIsRoot: true });

describe("mu-plugin-ssh and the remote's shell", { timeout: 180_000 }, () => {
  let st: ReturnType<typeof tempState>;
  let local: string;

  beforeAll(() => {
    st = tempState();
    local = oneCommitCheckout(st.dir);
  });

  afterAll(() => st?.done());

  it("a shell that prints before every command fails the reach phase, naming the text and the start-up files", async () => {
    const w = plugin();
    await w.hello();
    const r = (await w.call("link.checkSteps", { phase: "reach" })).result as {
      step: string;
      ok: unknown;
      detail: string;
    }[];
    const quiet = r.find((s) => s.step === "quiet");
    expect(quiet?.ok).toBe(false);
    expect(quiet?.detail).toMatch(/'Welcome to box'.*start-up files/);
    // git meets the same text as its protocol: a hand-back that names the cause.
    const push = await w.call("link.push", {
      localRepo: local,
      remoteRepo: "work/repo",
      rev: git(local, "rev-parse", "HEAD"),
      timeoutMs: 60_000,
    });
    expect(push.error?.data.kind).toBe("human");
    expect(push.error?.data.remedy).toMatch(/start-up files/);
    await w.close();
  });

  it("mu host check fails on that shell", () => {
    expect(muAt(local, ["plugin", "add", "ssh", "--", ...pluginArgv()], st.env).code).toBe(0);
    expect(muAt(local, ["host", "add", "box", "--plugin", "ssh"], st.env).code).toBe(0);
    const r = muAt(local, ["host", "check", "box"], st.env);
    expect(r.stdout).toMatch(/ssh:quiet.*Welcome to box/);
    expect(r.code).not.toBe(0);
  });

  it("a harness named from ~ passes the harness step, as the job's shell runs it", async () => {
    writeFileSync(join(sshd.home, "harness.sh"), '#!/bin/sh\necho "harnessed: $(cat)"\n', {
      mode: 0o755,
    });
    const missing = plugin(["--harness", "~/no-such-harness.sh"]);
    await missing.hello();
    expect((await missing.call("job.checkSteps", { phase: "agent" })).result).toMatchObject([
      { step: "harness", ok: false },
    ]);
    await missing.close();

    const w = plugin(["--harness", "~/harness.sh"]);
    await w.hello();
    expect((await w.call("job.checkSteps", { phase: "agent" })).result).toMatchObject([
      { step: "harness", ok: true },
    ]);
    const key = "job-tilde";
    w.target = {
      host: { name: "box" },
      job: { kind: "ssh", key },
      agent: { workstream: "main", name: "a", incarnation: 1 },
    };
    const spec = { workstream: "main", name: "a", harness: "h", role: "full-access", cwd: "." };
    expect((await w.call("job.start", { key, spec })).error).toBeUndefined();
    await w.call("channel.send", { text: "hi", msgId: "t1", mode: "followUp", force: false });
    const { watchId } = (await w.call("channel.watch", { afterRuns: 0 })).result as {
      watchId: string;
    };
    expect((await w.note(watchId)).params.observation).toMatchObject({
      lastText: "harnessed: hi\n",
    });
    expect((await w.call("job.stop", { key })).result).toBeNull();
    await w.close();
  });
});
