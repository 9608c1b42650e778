import { Command, CommanderError, Help, type Option } from "commander";
import { checkEnv } from "../env-check.js";
import { EXIT, type ExitCode, MuError } from "../errors.js";
import { packageVersion } from "../package-root.js";
import { terminator } from "../plugin/terminator.js";
import { restoreTail, setTailAside } from "./argv-tail.js";
import { handle } from "./handle.js";
import { interruptedLine } from "./interrupted.js";
import type { Io } from "./io.js";
import { addTopVerbs } from "./top-verbs.js";
import type { Run } from "./verb-args.js";

// The program's frame: the namespaces, and the verbs of the one the
// invocation names. Each group's definitions, like each verb's module, load
// only when used: a CLI's start-up time is a feature.

export type { Verb } from "./verb-args.js";

type AddVerbs = (ns: Command, run: Run) => void;

const GROUPS: { name: string; description: string; load: () => Promise<AddVerbs> }[] = [
  {
    name: "plugin",
    description: "register, list and remove plugins (never discovered)",
    load: async () => (await import("./plugin-verbs.js")).addPluginVerbs,
  },
  {
    name: "host",
    description: "host profiles and provider hosts",
    load: async () => (await import("./host-verbs.js")).addHostVerbs,
  },
  {
    name: "agent",
    description: "spawn, read, message and close agents",
    load: async () => (await import("./agent-verbs.js")).addAgentVerbs,
  },
  {
    name: "task",
    description: "minimal tasks for --task spawns",
    load: async () => (await import("./task-verbs.js")).addTaskVerbs,
  },
];

interface Built {
  program: Command;
  /** The exit code of whichever action ran. */
  result(): ExitCode;
}

/**
 * The program with the verbs of the namespaces in `load` (all of them when
 * absent); the others are listed but empty, which only their own --help or
 * verbs would show, and those load them.
 */
export async function buildProgram(
  io: Io,
  tail: string[] = [],
  argv: string[] = [],
  load?: readonly string[],
): Promise<Built> {
  const state = { code: EXIT.ok as ExitCode };
  let interrupted = false;
  const run: Run = async (verb) => {
    state.code = await handle(
      io,
      () => {
        checkEnv(io.ports, (line) => io.err(line));
        return verb(io);
      },
      () => terminator.terminating || interrupted,
    );
  };

  const program = new Command("mu")
    .description("mu's reference host for plugin protocol v1")
    .version(packageVersion(), "-V, --version", "print mu's version")
    .helpOption("-h, --help", "show help")
    .showSuggestionAfterError(true)
    .hook("preAction", restoreTail(tail))
    .hook("preAction", (_root, action) => {
      // From here on a signal interrupts this verb: say which, and what next.
      const verb = path(action).replace(/^mu /, "");
      terminator.explainWith((signal) => {
        interrupted = true;
        io.err(interruptedLine(verb, argv, signal));
      });
    });

  const namespaces = new Set<Command>();
  for (const g of GROUPS) {
    const ns = program.command(g.name).description(g.description);
    namespaces.add(ns);
    if (!load || load.includes(g.name)) (await g.load())(ns, run);
  }
  addTopVerbs(program, run);

  for (const cmd of allCommands(program))
    configure(cmd, io, state, namespaces.has(cmd), tail.length);
  return { program, result: () => state.code };
}

/** The namespace an argv names, directly or through `help`; nothing else needs a group loaded. */
function namedGroup(argv: readonly string[]): string[] {
  const words = argv.filter((a) => !a.startsWith("-"));
  const first = words[0] === "help" ? words[1] : words[0];
  return GROUPS.some((g) => g.name === first) ? [first as string] : [];
}

function* allCommands(cmd: Command): Generator<Command> {
  yield cmd;
  for (const sub of cmd.commands) yield* allCommands(sub);
}

function path(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

function configure(
  cmd: Command,
  io: Io,
  state: { code: ExitCode },
  namespace: boolean,
  setAside: number,
): void {
  cmd.exitOverride();
  // Commander lists a required option like any other: say so beside it.
  cmd.configureHelp({
    optionDescription(this: Help, o: Option) {
      const said = Help.prototype.optionDescription.call(this, o);
      return o.mandatory ? `${said} (required)` : said;
    },
  });
  cmd.configureOutput({
    writeOut: (s) => io.out(s),
    writeErr: (s) => io.err(s),
    // Commander's own message, and the verb's usage so the fix is in view,
    // as mu's one line.
    outputError: (message, write) => {
      const text = message
        .replace(/^error:\s*/, "")
        .replace(/\s+/g, " ")
        .trim()
        // Commander counted the one word that stands for the words set aside.
        .replace(/\bgot (\d+)\.$/, (got, n: string) =>
          setAside === 0 ? got : `got ${Number(n) - 1 + setAside}.`,
        );
      write(`mu: usage: ${text}; usage: ${path(cmd)} ${cmd.usage()}\n`);
    },
  });
  // A namespace: a missing or unknown verb is named, with the verbs there are.
  if (namespace) {
    cmd.allowExcessArguments(true);
    cmd.action((_opts: unknown, self: Command) => {
      const verbs = cmd.commands.map((c) => c.name()).join(", ");
      const typed = self.args[0];
      const what =
        typed === undefined
          ? `'${path(cmd)}' needs a verb`
          : `'${path(cmd)}' has no verb '${typed}'`;
      io.err(`mu: usage: ${what}; its verbs: ${verbs} (see: ${path(cmd)} --help)\n`);
      state.code = EXIT.usage;
    });
  } else if (cmd.parent && !hasAction(cmd)) {
    cmd.action(() => {
      io.err(`mu: usage: '${path(cmd)}' is not built yet in this version of mu\n`);
      state.code = EXIT.usage;
    });
  }
}

function hasAction(cmd: Command): boolean {
  return (cmd as unknown as { _actionHandler: unknown })._actionHandler != null;
}

/** Parses argv and runs the verb; returns mu's exit code. */
export async function runProgram(io: Io, argv: string[]): Promise<ExitCode> {
  const { parsed: typed, tail } = setTailAside(argv);
  // `mu help agent spawn`: commander's help command takes one word and would
  // print the group's help; the verb's own is what was asked for.
  const parsed =
    typed[0] === "help" && typed.length > 2 && !typed.slice(1).some((a) => a.startsWith("-"))
      ? [...typed.slice(1), "--help"]
      : typed;
  const { program, result } = await buildProgram(io, tail, argv, namedGroup(parsed));
  try {
    await program.parseAsync(parsed, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are successes; every other parse failure is usage.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof MuError) {
      io.err(`${err.line()}\n`);
      return err.exit;
    }
    throw err;
  }
  return result();
}

/** Every command's path under `mu`, namespaces included: for tests that walk the whole CLI. */
export async function commandPaths(): Promise<string[][]> {
  const silent: Io = { ports: undefined as never, out: () => {}, err: () => {} };
  const { program } = await buildProgram(silent);
  const paths: string[][] = [];
  for (const cmd of allCommands(program)) paths.push(path(cmd).split(" ").slice(1));
  return paths;
}
