import { createHash } from "node:crypto";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";

// What a trace may keep of a message. mu's rule for its own records holds
// here too: typed fields stay, free text becomes its length and a short
// hash (so two equal texts still compare equal, and a replay can match a
// request by its params), unless the user opts into content. Whatever the
// opt-in, the values of mu's secret-named environment variables are masked
// in every string before anything else looks at it.

/** Keys whose string value is free text wherever they appear. */
const FREE_TEXT = new Set([
  "script",
  "stdout",
  "stderr",
  "text",
  "lastText",
  "lastError",
  "instructions",
  "remedy",
  "message",
  // A spawn's --command goes out as the job spec's cmd. A view's command is
  // kept: it is a typed reply field, and a replayed spawn must open the view.
  "cmd",
  // What an agent's dialog asks (a boolean elsewhere, which stays).
  "pending",
]);
/** Keys whose value is a map of free-text values (a JobSpec's env, --param's map). */
const FREE_MAPS = new Set(["env", "params"]);
/** Keys whose value is a list of free texts: the keys an answer types into a dialog. */
const FREE_LISTS = new Set(["keys"]);

const SECRET_NAME = /TOKEN|SECRET|KEY|PASSWORD|CANARY/i;
/** Shorter values would mask ordinary words; nothing that short is a real secret. */
const MIN_SECRET = 4;

export function digest(text: string): string {
  const sha = createHash("sha256").update(text).digest("hex").slice(0, 12);
  return `[len=${Buffer.byteLength(text)} sha=${sha}]`;
}

export class Redactor {
  private readonly secrets: string[];
  /** The testbed's plant: a cut line masked as if whole. */
  private readonly cutAsWhole: boolean;

  constructor(
    env: Readonly<Record<string, string | undefined>>,
    readonly content: boolean,
  ) {
    this.secrets = secretValues(env);
    this.cutAsWhole = TESTBED_BUILD && planted(env, "cut-masked-whole");
  }

  /** More secrets, from an environment a plugin was started with. */
  addSecrets(env: Readonly<Record<string, string | undefined>>): void {
    for (const v of secretValues(env)) if (!this.secrets.includes(v)) this.secrets.push(v);
    this.secrets.sort((a, b) => b.length - a.length);
  }

  /** The length of the longest secret: how far past a cut masking must look. */
  get longest(): number {
    return this.secrets[0]?.length ?? 0;
  }

  mask(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join("[masked]");
    return out;
  }

  /**
   * The start of a longer line, masked: a secret that ran on past its end
   * left only its first characters there, which no whole-value mask finds.
   * The places to hide are found on the line as it is (every whole secret,
   * and the longest end that starts one), then each run of overlapping
   * places becomes one [masked]: found after a mask, a start whose first
   * characters are another, shorter secret would no longer look like one.
   */
  maskCut(line: string): string {
    if (this.cutAsWhole) return this.mask(line);
    const hide: [number, number][] = [];
    for (const s of this.secrets) {
      for (let i = line.indexOf(s); i !== -1; i = line.indexOf(s, i + 1))
        hide.push([i, i + s.length]);
      for (let k = Math.min(s.length - 1, line.length); k > 0; k--) {
        if (line.endsWith(s.slice(0, k))) {
          hide.push([line.length - k, line.length]);
          break;
        }
      }
    }
    hide.sort((x, y) => x[0] - y[0]);
    let out = "";
    let at = 0;
    for (const [from, to] of hide) {
      if (from < at) at = Math.max(at, to);
      else {
        out += `${line.slice(at, from)}[masked]`;
        at = to;
      }
    }
    return out + line.slice(at);
  }

  /**
   * Free text: masked, cut to max characters when given, then kept only
   * when content was asked for. The cut comes after the mask: cut first, a
   * secret across the cut would keep its first characters.
   */
  text(value: string, max?: number): string {
    // An empty text says nothing; its hash would only make it look like one.
    if (value === "") return value;
    const masked = max === undefined ? this.mask(value) : this.mask(value).slice(0, max);
    return this.content ? masked : digest(masked);
  }

  /** A JSON-RPC message: params, result and error are walked; the envelope is typed. */
  message(msg: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(msg)) {
      out[k] = k === "params" || k === "result" || k === "error" ? this.walk(v) : this.any(v);
    }
    return out;
  }

  /** Masks every string in a typed value, free text or not. */
  any(v: unknown): unknown {
    if (typeof v === "string") return this.mask(v);
    if (Array.isArray(v)) return v.map((x) => this.any(x));
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.any(x)]));
    return v;
  }

  private walk(v: unknown): unknown {
    if (typeof v === "string") return this.mask(v);
    if (Array.isArray(v)) return v.map((x) => this.walk(x));
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (FREE_TEXT.has(k) && typeof x === "string") out[k] = this.text(x);
      else if (FREE_LISTS.has(k) && Array.isArray(x))
        out[k] = x.map((y) => (typeof y === "string" ? this.text(y) : this.any(y)));
      else if (FREE_MAPS.has(k) && x !== null && typeof x === "object" && !Array.isArray(x))
        out[k] = Object.fromEntries(
          Object.entries(x).map(([n, y]) => [
            n,
            typeof y === "string" ? this.text(y) : this.any(y),
          ]),
        );
      else out[k] = this.walk(x);
    }
    return out;
  }

  /**
   * mu's own argv: the words that may carry a script, a message or a
   * --param value are free text; verbs, names, flags and paths stay, so the
   * invocation can be run again from the trace.
   */
  argv(argv: readonly string[]): string[] {
    const out: string[] = [];
    const words: string[] = [];
    let dashes = false;
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i] ?? "";
      if (!dashes && a === "--") {
        dashes = true;
        out.push(a);
        continue;
      }
      if (!dashes && a.startsWith("-") && a !== "-") {
        const eq = a.indexOf("=");
        const flag = eq === -1 ? a : a.slice(0, eq);
        if (!TEXT_OPTIONS.has(flag) && !VALUE_OPTIONS.has(flag)) {
          out.push(this.mask(a));
          continue;
        }
        const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
        if (value === undefined) {
          out.push(this.mask(a));
          continue;
        }
        const kept = TEXT_OPTIONS.has(flag) ? this.optionValue(flag, value) : this.mask(value);
        if (eq === -1) out.push(flag, kept);
        else out.push(`${flag}=${kept}`);
        continue;
      }
      words.push(a);
      const textAfter = TEXT_AFTER[`${words[0]} ${words[1]}`];
      out.push(textAfter !== undefined && words.length > textAfter ? this.text(a) : this.mask(a));
    }
    return out;
  }

  private optionValue(flag: string, value: string): string {
    const eq = flag === "--param" ? value.indexOf("=") : -1;
    if (eq === -1) return this.text(value);
    return `${this.mask(value.slice(0, eq))}=${this.text(value.slice(eq + 1))}`;
  }
}

/** Options of mu whose value is free text. */
const TEXT_OPTIONS = new Set([
  "--send",
  "--command",
  "--instructions",
  "--param",
  "--fetch",
  "--shell",
  "--exec",
]);

/**
 * Options of mu that take a typed value (a name, a path, a number). A path
 * stays: `host exec --file`'s is what a scenario made from the trace needs
 * to run the step again (the script itself is hashed on the wire).
 */
const VALUE_OPTIONS = new Set([
  "-w",
  "--file",
  "--cwd",
  "--workstream",
  "--host",
  "--plugin",
  "--provider",
  "--repo",
  "--max-sessions",
  "--timeout",
  "--timeout-ms",
  "--into",
  "--from",
  "--rev",
  "--to",
  "--phase",
  "--task",
  "--role",
  "--harness",
  "--seam",
  "--repeat",
  "--junit",
]);

/** How a trace keeps an option's value: hashed as text, kept as a value, or unknown. */
export function optionKind(flag: string): "text" | "value" | undefined {
  return TEXT_OPTIONS.has(flag) ? "text" : VALUE_OPTIONS.has(flag) ? "value" : undefined;
}

/** Per verb, how many words (the verb's own included) come before its free text. */
const TEXT_AFTER: Record<string, number> = {
  "host exec": 3,
  "agent send": 3,
  "agent interrupt": 3,
  "agent answer": 3,
};

function secretValues(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, v]) => SECRET_NAME.test(name) && v !== undefined && v.length >= MIN_SECRET)
    .map(([, v]) => v as string)
    .sort((a, b) => b.length - a.length);
}
