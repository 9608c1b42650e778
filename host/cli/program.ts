import { Command, CommanderError, Option } from "commander";
import { EXIT, type ExitCode, MuError } from "../errors.js";
import { agentRef } from "../names.js";
import { packageVersion } from "../package-root.js";
import { terminator } from "../plugin/terminator.js";
import { restoreTail, setTailAside } from "./argv-tail.js";
import { handle } from "./handle.js";
import { interruptedLine } from "./interrupted.js";
import type { Io } from "./io.js";

// Verb modules are imported inside their actions: a CLI's start-up time is a
// feature, and `mu --version` must not pay for sql.js or ajv.

export type Verb = (io: Io) => Promise<unknown>;

interface Built {
  program: Command;
  /** The exit code of whichever action ran. */
  result(): ExitCode;
}

export function buildProgram(io: Io, tail: string[] = [], argv: string[] = []): Built {
  const state = { code: EXIT.ok as ExitCode };
  let interrupted = false;
  const run = async (verb: Verb) => {
    state.code = await handle(
      io,
      () => verb(io),
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

  const plugin = namespace(
    program,
    "plugin",
    "register, list and remove plugins (never discovered)",
  );
  plugin
    .command("add")
    .description("register a plugin: check trust, run its handshake, record its declaration")
    .usage("<name> -- /abs/path/mu-plugin-<name> [args...]")
    .argument("<name>", "the plugin's name")
    .argument("<argv...>", "the absolute path of mu-plugin-<name> and its arguments")
    .action(async (name: string, argv: string[]) => {
      await run(async (io) => (await import("../verbs/plugin-add.js")).pluginAdd(io, name, argv));
    });
  plugin
    .command("rm")
    .description("remove a plugin that nothing names any more")
    .argument("<name>", "the plugin's name")
    .action(async (name: string) => {
      await run(async (io) => (await import("../verbs/plugin-rm.js")).pluginRm(io, name));
    });
  plugin
    .command("list")
    .description("list registered plugins with their argv, instance and seams")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/plugin-list.js")).pluginList(io, opts));
    });
  plugin
    .command("schema")
    .description("print the protocol schema file's path and the digest a handshake must name")
    .option("--digest", "print only the digest (sha256 of the file's exact bytes)")
    .option("--json", "print JSON")
    .action(async (opts: { digest?: boolean; json?: boolean }) => {
      await run(async (io) => (await import("../verbs/plugin-schema.js")).pluginSchema(io, opts));
    });
  plugin
    .command("check")
    .description("run a registered plugin through its contract, as a checklist")
    .argument("<name>", "the plugin's name")
    .option(
      "--seam <seam>",
      "also run the checks that make real things on this seam: host, job or channel (link is accepted; its checks always run) (repeatable)",
      collect,
    )
    .option(
      "--param <k=v>",
      "a value the seam checks pass on: host.acquire's params, and harness and cmd for job.start (repeatable)",
      collect,
    )
    .option("--host <name>", "run the link checks on this host mu knows (e.g. a --plugin profile)")
    .option("--repeat <n>", "rounds of the idempotency checks (default 10)")
    .option("--junit <file>", "also write the checklist as JUnit XML")
    .option("--json", "print JSON")
    .action(async (name: string, opts: import("../verbs/plugin-check.js").CheckOptions) => {
      await run(async (io) =>
        (await import("../verbs/plugin-check.js")).pluginCheck(io, name, opts),
      );
    });

  const host = namespace(program, "host", "host profiles and provider hosts");
  const hostVerbs = () => import("../verbs/host-provider.js");
  host
    .command("add")
    .description("add a host whose link is a plugin")
    .argument("<name>", "the host's name")
    .option("--plugin <plugin>", "the plugin that is the host's link")
    .option("--fetch <template>", "how to fetch when the link cannot (required then)")
    .option("--repo <path>", "the repository on the host")
    .option("--max-sessions <n>", "at most this many channels at once (1 to 1000)")
    // Kept only to refuse them with a reason: a --plugin host's link is the plugin.
    .addOption(new Option("--shell <cmd>").hideHelp())
    .addOption(new Option("--exec <cmd>").hideHelp())
    .action(async (name: string, opts: import("../verbs/host-profile.js").AddOptions) => {
      await run(async (io) => (await import("../verbs/host-profile.js")).hostAdd(io, name, opts));
    });
  host
    .command("rm")
    .description("remove a host profile")
    .argument("<name>", "the host's name")
    .action(async (name: string) => {
      await run(async (io) => (await import("../verbs/host-profile.js")).hostRm(io, name));
    });
  host
    .command("exec")
    .description("run a POSIX sh script on a host; exits with the script's code (124: timed out)")
    .usage("<name> [--timeout MS] [--cwd DIR] (-- <script...> | - | --file PATH)")
    .argument("<name>", "the host's name")
    .argument("[script...]", "the script (words are joined by spaces; a lone - reads stdin)")
    .option("--file <path>", "read the script from this file (- reads stdin)")
    .option("--cwd <dir>", "run it in this directory (default: the host's login directory)")
    .option("--timeout <ms>", "the script's time limit in milliseconds (default 20000)")
    .action(
      async (name: string, script: string[], opts: import("../verbs/host-exec.js").ExecOptions) => {
        await run(async (io) =>
          (await import("../verbs/host-exec.js")).hostExec(io, name, script, opts),
        );
      },
    );
  host
    .command("fetch")
    .description("fetch a host repository's HEAD into your checkout's FETCH_HEAD")
    .argument("<name>", "the host's name")
    .option(
      "--from <path>",
      "the repository on the host (default: the host's --repo, else its login directory)",
    )
    .option("--into <path>", "the local checkout (default: the one you are in)")
    .option("--timeout <ms>", "the fetch's time limit in milliseconds (default 20000)")
    .action(async (name: string, opts: { from?: string; into?: string; timeout?: string }) => {
      await run(async (io) => (await import("../verbs/host-git.js")).hostFetch(io, name, opts));
    });
  host
    .command("push")
    .description("make a host repository hold a commit of your checkout (idempotent)")
    .argument("<name>", "the host's name")
    .option("--rev <rev>", "the commit (default HEAD)")
    .option("--to <path>", "the repository on the host (default: the host's --repo)")
    .option("--timeout <ms>", "each push's time limit in milliseconds (default 20000)")
    .action(async (name: string, opts: { rev?: string; to?: string; timeout?: string }) => {
      await run(async (io) => (await import("../verbs/host-git.js")).hostPush(io, name, opts));
    });
  host
    .command("check")
    .description("run the plugin's check steps for a host, as a checklist")
    .argument("<name>", "the host's name")
    .option("--phase <phase>", "only this phase: template, reach or agent")
    .option("--harness <name>", "the harness the agent phase checks (default claude)")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { phase?: string; json?: boolean; harness?: string }) => {
      await run(async (io) => (await import("../verbs/host-check.js")).hostCheck(io, name, opts));
    });
  host
    .command("acquire")
    .description("acquire a machine from a provider plugin (an effect, journaled)")
    .argument("<name>", "the host's name")
    .requiredOption("--provider <plugin>", "the provider plugin")
    .option(
      "--param <k=v>",
      "a provider parameter (repeatable)",
      (v: string, acc: string[] = []) => [...acc, v],
    )
    .action(async (name: string, opts: { provider: string; param?: string[] }) => {
      await run(async (io) => (await hostVerbs()).hostAcquire(io, name, opts));
    });
  host
    .command("release")
    .description("release a provider host (idempotent)")
    .argument("<name>", "the host's name")
    .action(async (name: string) => {
      await run(async (io) => (await hostVerbs()).hostRelease(io, name));
    });
  host
    .command("status")
    .description("ask the provider how the host is, and record its facts")
    .argument("<name>", "the host's name")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { json?: boolean }) => {
      await run(async (io) => (await hostVerbs()).hostStatus(io, name, opts));
    });
  host
    .command("list")
    .description("list hosts with their state, plugin and instance")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await hostVerbs()).hostList(io, opts));
    });
  const agent = namespace(program, "agent", "spawn, read, message and close agents");
  agent
    .command("spawn")
    .description("start an agent on a plugin host: a job, its view, and its channel")
    .argument("<name>", "the agent's name in its workstream")
    .requiredOption("--host <host>", "the host to run it on")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--task <id>", "claim this task and give the agent its brief")
    .option("--send <text>", "the agent's first prompt")
    .option("--worktree", "work in a git worktree on the host, made from a commit of this checkout")
    .option("--from <rev>", "the commit the worktree is made from (default HEAD)")
    .option("--command <cmd>", "run this command line instead of the harness's own")
    .option("--role <role>", "full-access (default) or read-only")
    .option("--harness <name>", "the agent harness (default claude)")
    .action(async (name: string, opts: import("../verbs/agent-spawn.js").SpawnOptions) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-spawn.js")).agentSpawn(io, a.name, a.opts);
      });
    });
  agent
    .command("close")
    .description("stop an agent's job and close its view")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-close.js")).agentClose(io, a.name, a.opts);
      });
    });
  agent
    .command("forget")
    .description("end mu's record of a start no rule can settle, once you checked its host")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-forget.js")).agentForget(io, a.name, a.opts);
      });
    });
  agent
    .command("reattach")
    .description("open a new view of a detached job, on the same agent row")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-close.js")).agentReattach(io, a.name, a.opts);
      });
    });
  agent
    .command("list")
    .description("list agents with their job's liveness and their view")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/agent-read.js")).agentList(io, opts));
    });
  const deliverVerbs = () => import("../verbs/agent-deliver.js");
  agent
    .command("read")
    .description("one agent's liveness, turn state and last settled turn")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { workstream?: string; json?: boolean }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-read.js")).agentRead(io, a.name, a.opts);
      });
    });
  agent
    .command("send")
    .description("deliver a message (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<text>", "the message")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--steer", "into the running turn")
    .option("--fresh", "as a new conversation")
    .option("--force", "even when the agent is not idle")
    .action(
      async (name: string, text: string, opts: import("../verbs/agent-deliver.js").SendOptions) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentSend(io, a.name, text, a.opts);
        });
      },
    );
  agent
    .command("command")
    .description("run one of the harness's named commands (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<command>", "the command")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--instructions <text>", "text the command takes")
    .option("--force", "even when the agent is not idle")
    .action(
      async (
        name: string,
        command: string,
        opts: { workstream?: string; instructions?: string; force?: boolean },
      ) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentCommand(io, a.name, command, a.opts);
        });
      },
    );
  agent
    .command("interrupt")
    .description("stop the running turn and deliver a message (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<text>", "the message")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, text: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await deliverVerbs()).agentInterrupt(io, a.name, text, a.opts);
      });
    });
  agent
    .command("abort")
    .description("stop the running turn (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await deliverVerbs()).agentAbort(io, a.name, a.opts);
      });
    });
  agent
    .command("answer")
    .description("answer the agent's pending dialog with keys (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<keys...>", "the keys to press, in order")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--force", "even when no dialog is seen")
    .action(
      async (name: string, keys: string[], opts: { workstream?: string; force?: boolean }) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentAnswer(io, a.name, keys, a.opts);
        });
      },
    );
  agent
    .command("check")
    .description(
      "report a delivery's state (0: accepted; 1: not accepted, unreachable or unresolved; 3: mu never sent it)",
    )
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<msgId>", "the delivery")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--json", "print JSON")
    .action(async (name: string, msgId: string, opts: { workstream?: string; json?: boolean }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-read.js")).agentCheck(io, a.name, msgId, a.opts);
      });
    });
  const task = namespace(program, "task", "minimal tasks for --task spawns");
  task
    .command("add")
    .description("add an open task")
    .argument("<id>", "the task's id")
    .action(async (id: string) => {
      await run(async (io) => (await import("../verbs/task.js")).taskAdd(io, id));
    });
  task
    .command("list")
    .description("list tasks and who claimed them")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/task.js")).taskList(io, opts));
    });
  program
    .command("wait")
    .description(
      "wait for agents' turns to settle (0: settled; 5: timed out or dead; 7: a host deadline)",
    )
    .argument("<agents...>", "the agents: <name> (in -w's workstream) or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--timeout <seconds>", "give up after this many seconds (fractions allowed)")
    .option("--any", "return when the first one settles")
    .option("--json", "print JSON")
    .action(
      async (
        names: string[],
        opts: { workstream?: string; timeout?: string; any?: boolean; json?: boolean },
      ) => {
        await run(async (io) => (await import("../verbs/wait.js")).wait(io, names, opts));
      },
    );
  program
    .command("state")
    .description("what mu owes: effects still pending, and how to settle each")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/state.js")).state(io, opts));
    });

  for (const cmd of allCommands(program)) configure(cmd, io, state);
  return { program, result: () => state.code };
}

const collect = (v: string, acc: string[] = []) => [...acc, v];

/** The verb's name and options once a `<workstream>/<name>` is split. */
function named<O extends { workstream?: string }>(
  typed: string,
  opts: O,
): { name: string; opts: O } {
  const r = agentRef(typed, opts.workstream);
  return { name: r.name, opts: { ...opts, workstream: r.workstream } };
}

function namespace(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description);
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

function configure(cmd: Command, io: Io, state: { code: ExitCode }): void {
  cmd.exitOverride();
  cmd.configureOutput({
    writeOut: (s) => io.out(s),
    writeErr: (s) => io.err(s),
    // Commander's own message, and the verb's usage so the fix is in view,
    // as mu's one line.
    outputError: (message, write) => {
      const text = message
        .replace(/^error:\s*/, "")
        .replace(/\s+/g, " ")
        .trim();
      write(`mu: usage: ${text}; usage: ${path(cmd)} ${cmd.usage()}\n`);
    },
  });
  // A namespace: a missing or unknown verb is named, with the verbs there are.
  if (cmd.parent && cmd.commands.length > 0) {
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
  const { parsed, tail } = setTailAside(argv);
  const { program, result } = buildProgram(io, tail, argv);
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
