import { MuError } from "../errors.js";
import { ErrorReply, NoAnswer } from "../plugin/call-errors.js";

// What a check reports: passed, failed with evidence, or skipped with why.

export const CHECK_IDS = [
  "handshake",
  "eof",
  "link.exec",
  "link.push",
  "link.fetch",
  "link.timeout",
  "link.cwd",
  "link.script-size",
  "link.output",
  "link.git-timeout",
  "host.lifecycle",
  "host.idempotency",
  "host.replay",
  "host.gone",
  "host.facts",
  "host.errors",
  "host.inflight",
  "job.lifecycle",
  "job.idempotency",
  "job.replay",
  "job.inflight",
  "job.attach",
  "job.checkSteps",
  "job.spec",
  "channel.lifecycle",
  "channel.turns",
  "channel.dedupe",
  "channel.receipts",
  "channel.watch",
  "channel.controls",
  "messages",
  "canary",
  "containment",
] as const;

export type CheckId = (typeof CHECK_IDS)[number];

export interface Verdict {
  id: CheckId;
  result: "pass" | "fail" | "skip";
  /** One line: what was proved, what broke, or why it did not run. */
  detail: string;
  /** For a failure: the offending message, stderr line, or pid and command line. */
  evidence: string[];
  ms: number;
}

export type Outcome = Omit<Verdict, "id" | "ms">;

export const pass = (detail: string): Outcome => ({ result: "pass", detail, evidence: [] });
export const skip = (detail: string): Outcome => ({ result: "skip", detail, evidence: [] });
export const fail = (detail: string, evidence: string[] = []): Outcome => ({
  result: "fail",
  detail,
  evidence,
});

/** A check stops at the first broken promise; this carries it out of nested calls. */
export class CheckFailed extends Error {
  constructor(
    readonly detail: string,
    readonly evidence: string[] = [],
  ) {
    super(detail);
  }
}

/** How a failed call reads in evidence: the error the plugin sent, or why there was no answer. */
export function describeCall(err: unknown): string {
  if (err instanceof ErrorReply)
    return `${err.method} answered an error (${err.kind}): ${err.message}`;
  if (err instanceof NoAnswer) return err.message;
  if (err instanceof MuError) return err.line();
  return err instanceof Error ? err.message : String(err);
}

/**
 * Awaits a call the check depends on; its failure fails the check, and the
 * headline says what was observed (the error's kind and message, or why no
 * answer came), not only that the call failed.
 */
export async function must<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new CheckFailed(failedCall(what, err), [describeCall(err)]);
  }
}

/** "<what>: <what happened>", without naming the method twice. */
export function failedCall(what: string, err: unknown): string {
  const d = describeCall(err);
  return d.startsWith(`${what} `) ? d : `${what}: ${d}`;
}

/** What a run removed again, and what it could not, with the command that would. */
export interface Cleanup {
  removed: string[];
  left: { what: string; command?: string }[];
}
