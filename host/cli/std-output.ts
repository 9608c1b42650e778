import { EXIT, type ExitCode } from "../errors.js";

// mu's own stdout and stderr, which a reader may close before mu is done
// (`mu state | head -1`). A failed write must not crash mu: an uncaught
// EPIPE would exit 1, the code for an unknown outcome, print a stack trace,
// and skip the plugins' stop sequence. So the write is dropped, the verb
// runs to its end as it would have, and the lost output shows in the exit.

export interface StdOutput {
  write(text: string): void;
  /** Why a write failed (EPIPE, usually), once one has. */
  readonly lost: string | undefined;
  /** Settles once every write so far has succeeded or failed. */
  drained(): Promise<void>;
}

export function stdOutput(stream: NodeJS.WritableStream): StdOutput {
  let lost: string | undefined;
  // A verb that printed nothing lost nothing: the probe below would meet
  // the closed pipe all the same and turn its success into a failure.
  let wrote = false;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    lost ??= err.code ?? err.message;
  });
  return {
    write(text) {
      if (lost !== undefined || text === "") return;
      wrote = true;
      stream.write(text);
    },
    get lost() {
      return lost;
    },
    drained() {
      if (lost !== undefined || !wrote) return Promise.resolve();
      // Writes complete in order, so an empty one's callback comes after them.
      return new Promise((done) => {
        stream.write("", (err) => {
          if (err) lost ??= (err as NodeJS.ErrnoException).code ?? err.message;
          done();
        });
      });
    },
  };
}

/**
 * The exit once the verb is done: a verb that would have succeeded but
 * could not print all it meant to is unavailable (5); any other code says
 * more and stands.
 */
export async function exitAfterOutput(
  code: ExitCode,
  out: StdOutput,
  err: StdOutput,
): Promise<ExitCode> {
  await out.drained();
  if (out.lost === undefined || code !== EXIT.ok) return code;
  err.write(
    `mu: output: stdout was closed before mu had written all of it (${out.lost}); the verb itself finished, run it again with its output read to the end\n`,
  );
  return EXIT.unavailable;
}
