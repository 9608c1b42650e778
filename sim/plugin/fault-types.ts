// What a world's fault script may do to a call: the actions, the kinds of
// invalid line, and a fault that names when its action fires. The sim
// (serve.ts) and the fault proxy (proxy.ts) both apply them.

export type InvalidKind =
  | "not-json"
  | "unknown-field"
  | "bad-utf8"
  | "oversize"
  | "reply-to-none"
  | "request-to-mu"
  | "watch-unknown"
  /** A watch/settled whose observation lacks its runs: only the schema check can catch it. */
  | "watch-malformed"
  /** The answer's line without its newline, and then the process exits: a plugin dying mid-write. */
  | "unterminated"
  /** The fault's own `line`, its `{id}` the call's id: any message a plugin could get wrong. */
  | "raw";

export type Action =
  | { delayMs: number }
  /**
   * On host.status: the provider loses the machine the call names before it
   * answers (so it answers gone). Its jobs end with it, but for a job kind
   * that declares outlivesHost: those run on, for mu to stop.
   */
  | { loseHost: true }
  /** Hold the call until the world lists this name in `released` (at most a minute). */
  | { hold: string }
  | {
      error: {
        kind: "retryable" | "permanent" | "human" | "unknown-outcome";
        message?: string;
        remedy?: string;
        /** Apply the call first, then answer this error: an unknown outcome that did happen. */
        applied?: true;
      };
    }
  | { hang: true }
  | { invalid: InvalidKind; thenAnswer?: true; line?: string }
  | { replyTwice: true }
  | { crash: "before" | "after" }
  | { killMu: "before" | "after" }
  | { ignoreEof: true }
  /** Let shutdown pass unheeded, yet exit at stdin's end as told: only the EOF stops it. */
  | { ignoreShutdown: true }
  | { setInstance: string }
  | { advanceClockMs: number }
  /**
   * Write a line to stderr. splitAt: byte offsets of its UTF-8 (the newline
   * mu's reader ends it with included) where it is cut into writes made a
   * moment apart, so mu reads it in pieces as a pipe may deliver it, even
   * inside one character. unended: no newline after it, as a plugin that
   * stops mid-line leaves its last line.
   */
  | { stderr: string; splitAt?: number[]; unended?: true }
  /**
   * The next line the sim writes once the call arrives (its answer, a
   * reply, an error or an invalid line, unless a notification goes first),
   * in writes cut at these byte offsets (those inside it) a moment apart,
   * so mu reads it in pieces, even inside one character.
   */
  | { splitReply: number[] }
  /**
   * Start a helper that leaves the plugin's group with setsid, so no group
   * kill reaches it. "holdsPipes": it keeps the plugin's stdout and stderr
   * open until a file named release appears in the world's directory (or a
   * minute passes: then it leaves helper-gave-up there, the mark of a mu that
   * waited on it).
   */
  | { setsidHelper: true | "holdsPipes" }
  /**
   * Close the plugin's own stdin after answering: mu's next write meets EPIPE.
   * "runOn": close it before answering, and run on (SIGTERM ignored) until
   * the group is killed, so only the EPIPE tells mu the plugin is unreachable.
   */
  | { closeStdin: true | "runOn" }
  /**
   * The canary the plugin was given, on stderr or in a reply. at: character
   * offsets of one stderr line, filled with x, where the canary is written
   * (a later one over an earlier one, " and more" after the last), so a
   * test can put it across mu's cut.
   */
  | { leakCanary: "stderr"; at?: number[] }
  | { leakCanary: "reply" }
  | { reply: unknown }
  /** Apply the call as usual, then deep-merge this into its result (null deletes a key). */
  | { patchReply: Record<string, unknown> }
  /** On a channel.watch: when mu cancels it, send watch/settled anyway, crossing the cancel. */
  | { settleOnCancel: true }
  /** Before answering, the target agent's channel restarts on its own: a new incarnation. */
  | { restartChannel: true }
  /** Answer as usual, then die this many ms later, as a plugin that crashes mid-watch. */
  | { exitAfterMs: number }
  /**
   * Start a helper inside the plugin's own group that holds its stdout and
   * stderr and ignores shutdown, stdin's end and SIGTERM: only a kill of the
   * group ends it (or, with lingerMs, its own exit that long after it starts).
   */
  | { groupHelper: true | { lingerMs: number } }
  /** From now on, once told to stop (shutdown or stdin's end), take this long to exit. */
  | { slowExitMs: number }
  /** Close stdout and stderr for good, answering nothing more, yet run on until told to stop. */
  | { closeStdout: true }
  // Broken variants the contract suite must catch (sim/plugin/misbehave.ts).
  | { execIgnoresTimeout: true }
  | { releaseErrorsWhenGone: true }
  | { releaseOnlyOwn: true }
  | { acquireIgnoresFence: true };

export interface Fault {
  on: string;
  /** The 1-based number of the call to this method, over the world's life. */
  call?: number;
  /** Only calls whose params hold these values, by dotted path ("target.agent.name": "a"). */
  match?: Record<string, unknown>;
  times?: "once" | "always";
  do: Action;
}
