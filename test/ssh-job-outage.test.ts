import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { harnessArgs, plugin, sshd, until, useSshd } from "./ssh-kit.js";

// job.start is an effect: once the remote may have started the job, a lost
// connection must not answer `retryable` (which says nothing happened).
// A stand-in rmdir on the sessions' PATH holds the start's last steps (its
// lock's removal and its answer) while a marker file exists, so the test
// can cut the connection at the one moment the job runs and the reply has
// not left the remote.

const tools = mkdtempSync(join(tmpdir(), "mu-ssh-tools-"));
const hold = join(tools, "hold");
writeFileSync(
  join(tools, "rmdir"),
  `#!/bin/sh\ncase $1 in */lock) if [ -e ${hold} ]; then : > ${hold}.reached; while [ -e ${hold} ]; do sleep 0.05; done; fi ;; esac\nexec /bin/rmdir "$@"\n`,
  { mode: 0o755 },
);

useSshd({ pathFirst: tools });

/** The plugin's control socket (its directory is named by the plugin's pid). */
function controlSocket(pid: number): string {
  const dir = readdirSync(tmpdir()).find((d) => d.startsWith(`mu-ssh-${pid}-`));
  if (!dir) throw new Error(`no control socket directory for plugin ${pid}`);
  return join(tmpdir(), dir, "c");
}

describe("mu-plugin-ssh job.start across a lost connection", { timeout: 180_000 }, () => {
  it("a connection lost once the job runs answers no retryable, and a lookup finds the job", async () => {
    const w = plugin(harnessArgs);
    await w.hello();
    const key = "job-outage";
    w.target = { host: { name: "box" }, job: { kind: "ssh", key } };
    expect((await w.call("job.lookup", { key, fence: false })).result).toEqual({ none: true });
    // The master stops answering on its socket (as when it dies between the
    // plugin's look at it and the next session's connect): ssh then runs the
    // session over a connection of its own, and reports that one's loss itself.
    const sock = controlSocket(w.child.pid ?? 0);
    rmSync(sock);
    execFileSync("python3", [
      "-c",
      "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
      sock,
    ]);
    writeFileSync(hold, "");
    const start = w.call("job.start", {
      key,
      spec: { workstream: "main", name: "o", harness: "fake", cwd: ".", env: {} },
    });
    await until("the start to have run its job", () => existsSync(`${hold}.reached`));
    // The job's loop runs and is marked started: the effect has happened.
    expect(existsSync(join(sshd.home, ".mu-plugin-ssh/jobs", key, "started"))).toBe(true);
    sshd.dropConnections();
    rmSync(hold);
    const r = await start;
    expect(r.error?.data.kind).not.toBe("retryable");
    // The answer lost, the plugin looked again over a new connection and
    // found the job its start made: that is the start's answer.
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({ view: { command: expect.stringMatching(/tail/) } });
    expect((await w.call("job.lookup", { key, fence: true })).result).toMatchObject({ found: {} });
    expect((await w.call("job.stop", { key })).result).toBeNull();
    await w.close();
    rmSync(tools, { recursive: true, force: true });
  });
});
