import { classify, EXIT, type ExitCode } from "../errors.js";
import type { Io } from "./io.js";

/**
 * Every verb's action runs inside this wrapper: a returned code is the exit
 * code, a thrown error is printed as its one line and mapped once to the
 * documented exit code.
 */
export async function handle(
  io: Io,
  action: () => Promise<unknown>,
  signalled: () => boolean = () => false,
): Promise<ExitCode> {
  try {
    const code = await action();
    // Verbs that only succeed or throw return nothing; that is exit 0.
    return typeof code === "number" ? (code as ExitCode) : EXIT.ok;
  } catch (err) {
    const { exit, line } = classify(err);
    // A signal's stop sequence makes calls fail ("the plugin stopped"); that
    // is its effect, not news: the interrupted line says what happened.
    if (!signalled()) io.err(`${line}\n`);
    return exit;
  }
}
