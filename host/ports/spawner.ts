import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import type { ChildProcess, ExitStatus, ProcessSpawner } from "./types.js";

function killGroup(pgid: number, signal: "SIGKILL" | "SIGTERM"): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    // ESRCH: the group is already empty.
    if ((err as { code?: string }).code !== "ESRCH") throw err;
  }
}

export const realSpawner: ProcessSpawner = {
  spawn(argv, opts) {
    return new Promise((resolve, reject) => {
      // Never empty: a plugin starts only once the trust rules accepted its
      // argv[0] as an absolute path.
      const [file, ...args] = argv as readonly [string, ...string[]];
      // detached: the child calls setsid, so it leads a group of its own that
      // mu can signal as a whole, and a terminal's ^C reaches only mu.
      const child = spawn(file, args, {
        env: opts.env,
        cwd: opts.cwd,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
      const exited = new Promise<ExitStatus>((done) => {
        child.once("exit", (code, signal) => done({ code, signal }));
      });
      child.once("error", reject);
      child.once("spawn", () => {
        child.removeListener("error", reject);
        // A write to a plugin that closed its stdin or died must not kill mu
        // with EPIPE: it is reported, and the plugin is stopped.
        let inputError: ((code: string) => void) | undefined;
        child.stdin.on("error", (err: NodeJS.ErrnoException) => inputError?.(err.code ?? "EIO"));
        child.on("error", () => {});
        const pid = child.pid as number;
        const handle: ChildProcess = {
          pid,
          write: (bytes) => {
            if (child.stdin.destroyed || child.stdin.writableEnded) return false;
            child.stdin.write(bytes);
            return true;
          },
          closeInput: () => {
            if (!child.stdin.writableEnded) child.stdin.end();
          },
          onStdout: (fn) => child.stdout.on("data", fn),
          onStderr: (fn) => child.stderr.on("data", fn),
          onStdoutEnd: (fn) => child.stdout.once("end", fn),
          onInputError: (fn) => {
            inputError = fn;
          },
          releasePipes: () => {
            // Piped stdio is a net.Socket, which the stream types do not say.
            for (const pipe of [child.stdin, child.stdout, child.stderr])
              (pipe as unknown as Socket).unref();
          },
          exited,
          killGroup: (signal) => killGroup(pid, signal),
        };
        resolve(handle);
      });
    });
  },
};
