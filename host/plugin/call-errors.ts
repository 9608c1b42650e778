import type { ErrorKind } from "./envelope.js";

/**
 * Why a call has no answer. `written` separates the two families the spec
 * keeps apart: a call never written is a definite refusal (nothing can have
 * happened), one written and not answered may have had its effect.
 */
export type NoAnswerReason =
  | "not-sent" // cancelled, or mu terminating, before the request was written
  | "refused" // the plugin is broken or stopped for this invocation
  | "oversize" // the encoded request is over the line limit, so never written
  | "deadline" // the deadline passed; $/cancel sent, the plugin stopped
  | "aborted" // the verb cancelled the call after it was written
  | "stopped" // the plugin was stopped while the call was pending
  | "exited"; // the plugin exited or closed stdout while the call was pending

export class NoAnswer extends Error {
  constructor(
    readonly method: string,
    readonly reason: NoAnswerReason,
    message: string,
  ) {
    super(message);
    this.name = "NoAnswer";
  }

  get written(): boolean {
    return this.reason !== "not-sent" && this.reason !== "refused" && this.reason !== "oversize";
  }
}

/** The plugin answered with a JSON-RPC error carrying data.kind. */
export class ErrorReply extends Error {
  constructor(
    readonly method: string,
    readonly kind: ErrorKind,
    message: string,
    readonly remedy?: string,
  ) {
    super(message);
    this.name = "ErrorReply";
  }
}
