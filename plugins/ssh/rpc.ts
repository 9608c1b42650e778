import { AsyncLocalStorage } from "node:async_hooks";

// JSON-RPC 2.0 over stdio, one object per line, written from the published
// protocol only: this plugin never imports the host or the testbed.

export type Kind = "retryable" | "permanent" | "human" | "unknown-outcome";

/** A failure the plugin reports as a typed protocol error. */
export class PluginError extends Error {
  constructor(
    readonly kind: Kind,
    message: string,
    readonly remedy?: string,
  ) {
    super(message);
  }
}

/** The plugin's root on the remote (its --home) is not there, or cannot be written: a person's to fix. */
export const noRemoteRoot = (root: string): PluginError =>
  new PluginError(
    "human",
    `mu-plugin-ssh: the remote root '${root}' is missing or not writable`,
    "create it on the remote or fix --home in the plugin's registration",
  );

export type Params = Record<string, unknown>;

const calls = new AsyncLocalStorage<{ deadline: number }>();

/** Runs one call's work with its deadline (epoch ms) in reach of everything it calls. */
export function withDeadline<T>(p: Params, work: () => T): T {
  const d = Number(p.deadline);
  return calls.run({ deadline: Number.isFinite(d) ? d : Number.POSITIVE_INFINITY }, work);
}

/** The deadline of the call being answered; none outside a call. */
export function callDeadline(): number {
  return calls.getStore()?.deadline ?? Number.POSITIVE_INFINITY;
}

export interface Request {
  id?: number | string;
  method?: string;
  params?: Params;
}

const MAX_LINE = 1024 * 1024;

export function writeMessage(msg: unknown): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

export function reply(id: number | string, result: unknown): void {
  writeMessage({ jsonrpc: "2.0", id, result: result ?? null });
}

export function replyError(id: number | string, err: unknown): void {
  const e =
    err instanceof PluginError
      ? err
      : new PluginError("unknown-outcome", `mu-plugin-ssh: ${(err as Error)?.message ?? err}`);
  const data: Record<string, unknown> = { kind: e.kind };
  if (e.remedy || e.kind === "human") data.remedy = e.remedy ?? "ask the machine's administrator";
  writeMessage({ jsonrpc: "2.0", id, error: { code: -32000, message: e.message, data } });
}

/** Splits stdin into lines and hands each parsed message on; bad lines are dropped to stderr. */
export function readMessages(onMessage: (m: Request) => void, onEnd: () => void): void {
  let buf = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buf += chunk;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      try {
        onMessage(JSON.parse(line) as Request);
      } catch {
        process.stderr.write("mu-plugin-ssh: dropped a line that is not JSON\n");
      }
    }
    if (buf.length > MAX_LINE) buf = "";
  });
  process.stdin.on("end", onEnd);
}

/**
 * Whether a result leaves room on its reply line under the 1 MiB limit. Bytes,
 * not characters: a replacement character for a byte that was not UTF-8
 * takes three bytes on the line, a control character six.
 */
export function fitsReply(r: unknown): boolean {
  return Buffer.byteLength(JSON.stringify(r), "utf8") <= MAX_LINE - 64 * 1024;
}

/** Cuts the longer of stdout/stderr until the reply's JSON stays under the 1 MiB line limit. */
export function fitReply(r: { stdout: string; stderr: string; partial: boolean }): void {
  while (!fitsReply(r)) {
    if (r.stdout.length >= r.stderr.length) r.stdout = r.stdout.slice(0, r.stdout.length >> 1);
    else r.stderr = r.stderr.slice(0, r.stderr.length >> 1);
    r.partial = true;
  }
}
