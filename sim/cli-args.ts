import { type ParseArgsConfig, parseArgs } from "node:util";

// The testbed's own commands (the scenario runner, the explorer) answer
// --help with their usage and an unknown option with one usage line and
// exit 2, the way mu does, rather than a Node stack trace.

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * What each flag does, for --help: one line a flag. A flag with a default in
 * its parse options gets "(default: …)" added; one without says its own
 * default, or that it has none.
 */
export type FlagHelp = Record<string, string | readonly [arg: string, what: string]>;

/** The --help text: the usage line, then one line per flag with its default. */
export function helpText(usage: string, options: Options, explain: FlagHelp): string {
  const rows: (readonly [string, string])[] = Object.entries(explain).map(([flag, said]) => {
    const o = options[flag];
    const [name, what] = typeof said === "string" ? [flag.toUpperCase(), said] : said;
    const arg = o?.type === "string" ? ` ${name}` : "";
    const d =
      o && "default" in o && o.default !== undefined
        ? ` (default: ${o.default === false ? "off" : String(o.default)})`
        : "";
    return [`--${flag}${arg}`, `${what}${d}`] as const;
  });
  rows.push(["-h, --help", "print this help"]);
  const w = Math.max(...rows.map(([f]) => f.length));
  return `${usage}\n\n${rows.map(([f, t]) => `  ${f.padEnd(w)}  ${t}`).join("\n")}\n`;
}

export function parseOrUsage<O extends Options>(
  name: string,
  usage: string,
  options: O,
  allowPositionals = false,
  explain: FlagHelp = {},
) {
  const all = { ...options, help: { type: "boolean", short: "h" } } as O & {
    help: { type: "boolean"; short: "h" };
  };
  let parsed: ReturnType<typeof parseArgs<{ options: typeof all; allowPositionals: boolean }>>;
  try {
    parsed = parseArgs({ options: all, allowPositionals });
  } catch (err) {
    const why = (err as Error).message.split(/\n|\. To specify/)[0];
    process.stderr.write(`${name}: usage: ${why}; ${usage}\n`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(helpText(usage, options, explain));
    process.exit(0);
  }
  return parsed;
}
