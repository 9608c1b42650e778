import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

// A private sshd on 127.0.0.1 for the ssh plugin's tests: its own host key,
// client key, sshd_config, known_hosts and client config, all in one temp
// dir. Nothing reads or writes ~/.ssh or /etc/ssh. If sshd cannot start the
// test fails: a missing sshd is a broken machine, not a reason to skip.

export interface Sshd {
  dir: string;
  port: number;
  /** The directory the plugin treats as the remote root (--home). */
  home: string;
  /** The client config naming host "box". */
  config: string;
  key: string;
  knownHosts: string;
  /** Every remote session carries MU_SSH_TEST=<marker> (sshd SetEnv). */
  marker: string;
  start(): Promise<void>;
  /** Stops the listener and every connection it serves. */
  stop(): Promise<void>;
  /** Drops every live connection; the listener stays up. */
  dropConnections(): void;
  /** Kills whatever a remote session left running, by its marker. */
  killRemote(): number[];
  done(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: "127.0.0.1" });
    c.on("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
}

/** Pids of processes whose environment holds NAME=VALUE. */
export function pidsWithEnv(entry: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, "latin1").split("\0").includes(entry))
        out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

export interface SshdOptions {
  /** Printed on stdout before every remote command, as a noisy shell start-up file does. */
  banner?: string;
  /** Sessions get HOME set to the remote root, so `~` there is the test's own directory. */
  homeIsRoot?: boolean;
  /** A directory whose commands come first on the sessions' PATH (a test's stand-ins for remote tools). */
  pathFirst?: string;
}

export async function startSshd(opts: SshdOptions = {}): Promise<Sshd> {
  for (const bin of ["/usr/sbin/sshd", "ssh", "ssh-keygen"])
    try {
      execFileSync("sh", ["-c", `command -v ${bin}`], { stdio: "ignore" });
    } catch {
      throw new Error(
        `the ssh tests need ${bin}: apt-get install -y openssh-server openssh-client`,
      );
    }
  // sshd's privilege-separation directory.
  // (Only root can make it; a non-root sshd that needs it says so when it fails to start.)
  try {
    if (!existsSync("/run/sshd")) mkdirSync("/run/sshd", { mode: 0o755, recursive: true });
  } catch {
    // not root
  }
  const dir = mkdtempSync(join(tmpdir(), "mu-sshd-"));
  const home = join(dir, "remote");
  mkdirSync(home);
  const hostKey = join(dir, "host_key");
  const key = join(dir, "client_key");
  for (const f of [hostKey, key])
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "mu-test", "-f", f]);
  writeFileSync(join(dir, "authorized_keys"), readFileSync(`${key}.pub`), { mode: 0o600 });
  const port = await freePort();
  const marker = randomBytes(8).toString("hex");
  const sshdConfig = join(dir, "sshd_config");
  const extra: string[] = [];
  if (opts.banner !== undefined) {
    const wrapper = join(dir, "banner.sh");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' '${opts.banner.replace(/'/g, "")}'\n[ -n "$SSH_ORIGINAL_COMMAND" ] && exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n`,
      { mode: 0o755 },
    );
    extra.push(`ForceCommand ${wrapper}`);
  }
  writeFileSync(
    sshdConfig,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "StrictModes no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      `SetEnv MU_SSH_TEST=${marker}${opts.homeIsRoot ? ` HOME=${home}` : ""}${opts.pathFirst ? ` PATH=${opts.pathFirst}:/usr/local/bin:/usr/bin:/bin` : ""}`,
      ...extra,
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  const knownHosts = join(dir, "known_hosts");
  const pub = readFileSync(`${hostKey}.pub`, "utf8").split(" ").slice(0, 2).join(" ");
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${pub}\n`);
  const config = join(dir, "ssh_config");
  writeFileSync(
    config,
    [
      "Host box",
      "  HostName 127.0.0.1",
      `  Port ${port}`,
      `  User ${userInfo().username}`,
      `  IdentityFile ${key}`,
      "  IdentitiesOnly yes",
      `  UserKnownHostsFile ${knownHosts}`,
      "  GlobalKnownHostsFile /dev/null",
      "  StrictHostKeyChecking yes",
      "",
    ].join("\n"),
  );

  let proc: ChildProcess | undefined;
  let err = "";
  const s: Sshd = {
    dir,
    port,
    home,
    config,
    key,
    knownHosts,
    marker,
    async start() {
      err = "";
      // Its own group, so stop() reaches the listener and its sessions' sshds.
      const p = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", sshdConfig], {
        detached: true,
        stdio: ["ignore", "ignore", "pipe"],
      });
      proc = p;
      p.stderr?.on("data", (b: Buffer) => {
        err += b.toString("utf8");
      });
      for (let i = 0; i < 400; i++) {
        if (p.exitCode !== null || p.signalCode !== null)
          throw new Error(`sshd did not start (exit ${p.exitCode}): ${err.trim()}`);
        if (await accepts(port)) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`sshd did not listen on 127.0.0.1:${port}: ${err.trim()}`);
    },
    async stop() {
      const p = proc;
      if (!p?.pid || p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise((r) => p.on("exit", r));
      const sessions = children(p.pid);
      try {
        process.kill(-p.pid, "SIGKILL");
      } catch {
        // already gone
      }
      for (const c of sessions)
        try {
          process.kill(c, "SIGKILL");
        } catch {
          // already gone
        }
      await gone;
    },
    dropConnections() {
      if (!proc?.pid) return;
      for (const c of children(proc.pid))
        try {
          process.kill(c, "SIGKILL");
        } catch {
          // already gone
        }
    },
    killRemote() {
      const pids = pidsWithEnv(`MU_SSH_TEST=${marker}`);
      for (const pid of pids)
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      return pids;
    },
    async done() {
      await s.stop();
      s.killRemote();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await s.start();
  return s;
}
