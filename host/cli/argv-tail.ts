import type { Command } from "commander";
import { UsageError } from "../errors.js";

// Commander copies the words after `--` with one spread call, and a spread of
// some 150,000 words overflows the stack. mu hands commander a single stand-in word
// for most of them and puts the real words back just before the verb's action
// runs. NUL cannot occur in an argv word, so the stand-in cannot be typed.
const STAND_IN = "\0mu:words-after-dashes";
// Only a long tail is set aside: a short one parses as commander always did
// (`mu agent send -- bob hi` puts every word in its own argument).
const LONG_TAIL = 1000;
// The first words of a long tail stay in place, more than any verb has
// arguments: commander then fills each argument, the host of `mu host exec --
// box ...` among them, and counts too many, as it does for a short tail.
const KEPT = 8;

/** Splits argv at its first `--`: what commander parses, and the words kept aside. */
export function setTailAside(argv: string[]): { parsed: string[]; tail: string[] } {
  const at = argv.indexOf("--");
  if (at === -1 || argv.length - at - 1 <= LONG_TAIL) return { parsed: argv, tail: [] };
  const from = at + 1 + KEPT;
  return { parsed: [...argv.slice(0, from), STAND_IN], tail: argv.slice(from) };
}

/** A preAction hook that swaps the stand-in back for the words it stood for. */
export function restoreTail(tail: string[]) {
  return (_root: Command, action: Command): void => {
    if (tail.length === 0) return;
    const args = action.processedArgs as unknown[];
    for (let i = 0; i < args.length; i++) {
      const v = args[i];
      if (Array.isArray(v) && v.includes(STAND_IN)) {
        const out: string[] = [];
        for (const w of v as string[]) {
          if (w === STAND_IN) for (const t of tail) out.push(t);
          else out.push(w);
        }
        args[i] = out;
      } else if (v === STAND_IN) {
        // Unreachable while no verb takes more than KEPT arguments (commander
        // refuses the extra words first); kept so one that does fails loudly.
        throw new UsageError("cli.too-many", "usage", "too many arguments", {
          hint: `see: mu ${commandPath(action)} --help`,
        });
      }
    }
  };
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}
