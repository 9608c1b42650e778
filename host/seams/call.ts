import { firstLine, UnavailableError, UnknownOutcomeError, UsageError } from "../errors.js";
import { ErrorReply, NoAnswer } from "../plugin/call-errors.js";
import type { Registration, Supervisor } from "../plugin/supervisor.js";
import type { Clock } from "../ports/types.js";

// How a seam call's failures become mu's errors, in one place: retryable is
// retried with the same params, permanent and human end the verb (exit 5),
// and anything that may have happened is an unknown outcome for an effect
// (exit 1) or an unavailable answer for a read (exit 5).

/** Retries after the first attempt; a retryable error means nothing happened. */
export const MAX_RETRIES = 3;
const BACKOFF_MS = 100;

export interface SeamCall {
  method: string;
  params: Record<string, unknown>;
  timeoutMs: number;
  /** An effect's lost answer is an unknown outcome, not a failure. */
  effect: boolean;
  signal?: AbortSignal;
}

export async function callPlugin(
  sup: Supervisor,
  clock: Clock,
  reg: Registration,
  c: SeamCall,
): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      const opts = c.signal
        ? { timeoutMs: c.timeoutMs, signal: c.signal }
        : { timeoutMs: c.timeoutMs };
      return await sup.call(reg, c.method, c.params, opts);
    } catch (err) {
      if (err instanceof ErrorReply && err.kind === "retryable" && attempt < MAX_RETRIES) {
        await clock.sleep(BACKOFF_MS * (attempt + 1));
        continue;
      }
      throw mapCallError(reg.name, c, err, attempt);
    }
  }
}

export function mapCallError(
  plugin: string,
  c: Pick<SeamCall, "method" | "effect">,
  err: unknown,
  retries = 0,
): unknown {
  const what = `'${plugin}' ${c.method}`;
  if (err instanceof ErrorReply) {
    const msg = firstLine(err.message);
    switch (err.kind) {
      case "retryable":
        return new UnavailableError(
          "call.retryable",
          "plugin",
          `${what} failed after ${retries} retries: ${msg}`,
          {
            hint: "try again later",
          },
        );
      case "permanent":
        return new UnavailableError("call.permanent", "plugin", `${what} failed: ${msg}`, {
          hint: "the plugin says a retry will not help; its stderr may say why",
        });
      case "human":
        return new UnavailableError("call.human", "plugin", `${what} needs a person: ${msg}`, {
          hint: err.remedy ?? "see the plugin's documentation",
        });
      case "unknown-outcome":
        return c.effect
          ? new UnknownOutcomeError(
              "call.unknown-outcome",
              "plugin",
              `${what} may or may not have happened: ${msg}`,
              {
                hint: "run the verb again to resolve it; mu will not repeat it blindly",
              },
            )
          : new UnavailableError("call.unknown", "plugin", `${what} has no answer: ${msg}`, {
              // A script is not journaled: mu cannot tell whether it ran.
              hint:
                c.method === "link.exec"
                  ? "the script may have run; unless the plugin's message says it stopped it, it may still be running there: look on the host before you run it again"
                  : "ask again later",
            });
    }
  }
  if (err instanceof NoAnswer) {
    if (err.reason === "oversize") {
      return new UsageError("call.too-long", "usage", `${what} was not sent: ${err.message}`, {
        hint: "nothing happened; make the script, message or parameters smaller",
      });
    }
    if (!err.written) {
      return new UnavailableError(
        "call.not-sent",
        "plugin",
        `${what} was not sent: ${err.message}`,
        { hint: "nothing happened; run the verb again" },
      );
    }
    return c.effect
      ? new UnknownOutcomeError(
          "call.no-answer",
          "plugin",
          `${what} got no answer (${err.reason}); it may have happened`,
          {
            hint: "run the verb again to resolve it; mu will not repeat it blindly",
          },
        )
      : new UnavailableError(
          "call.no-answer",
          "plugin",
          `${what} got no answer (${err.reason}): ${err.message}`,
          { hint: `check the plugin with: mu plugin check ${plugin}` },
        );
  }
  return err;
}
