import { type ParseArgsConfig, parseArgs } from "node:util";

// The testbed's own commands (the scenario runner, the explorer) answer
// --help with their usage and an unknown option with one usage line and
// exit 2, the way mu does, rather than a Node stack trace.

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseOrUsage<O extends Options>(
  name: string,
  usage: string,
  options: O,
  allowPositionals = false,
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
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return parsed;
}
