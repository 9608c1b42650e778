import { UsageError } from "../../errors.js";
import type { LinkHost } from "../../hosts/link-host.js";
import { checkName } from "../../names.js";
import type { JobSeam, Seams } from "../../protocol/declaration.js";
import { type Mux, requireCommandLines } from "../../view/mux.js";
import type { SpawnOptions, SpawnRequest } from "./context.js";

// Step 1 of a spawn: every refusal that needs no call and writes nothing
// (exit 2). The arguments are judged before the host is read, the host's
// kind after.

interface Honours {
  command: boolean;
  env: boolean;
  sockets: boolean;
  roles: string[];
}

/** What the kind honours; absent means the environment and the full-access role only. */
export function honoursOf(job: JobSeam): Honours {
  const h = job.honours ?? {};
  return {
    command: h.command ?? false,
    env: h.env ?? true,
    sockets: h.sockets ?? false,
    roles: h.roles ?? ["full-access"],
  };
}

/** The arguments alone: names, --task with --send, the role. */
export function refuseArgs(name: string, opts: SpawnOptions): SpawnRequest {
  const ws = opts.workstream ?? "main";
  for (const [what, v] of [
    ["agent name", name],
    ["workstream", ws],
  ] as const) {
    checkName(what, v, "agent.name");
  }
  if (opts.task !== undefined && opts.send !== undefined) {
    throw new UsageError("spawn.task-and-send", "usage", "give --task or --send, not both", {
      hint: "--task gives the agent the task's brief as its first prompt",
    });
  }
  const role = opts.role ?? "full-access";
  if (role !== "full-access" && role !== "read-only") {
    throw new UsageError(
      "spawn.role",
      "usage",
      `--role '${role}' is not one of full-access, read-only`,
      { hint: "leave it out for full-access" },
    );
  }
  const next = `mu agent spawn ${name} --host ${opts.host} -w ${ws}`;
  return { name, ws, role, opts, next };
}

/** What the host's kind cannot do for this spawn; returns the declared job seam. */
export function refuseOnHost(h: LinkHost, req: SpawnRequest, mux: Mux): JobSeam {
  const { name, opts, role } = req;
  const seams = (h.reg.declaration as { seams?: Seams } | undefined)?.seams ?? {};
  const job = seams.job;
  const p = h.reg.name;
  if (!job) {
    throw new UsageError(
      "spawn.no-job",
      "agent",
      h.provider
        ? `host '${opts.host}' comes from provider '${p}', which declares no job seam, so it takes no agent`
        : `host '${opts.host}' is a link-only host: plugin '${p}' declares no job seam, so it takes no agent`,
      { hint: "spawn on a host whose plugin declares the job seam" },
    );
  }
  const honours = honoursOf(job);
  if (role !== "full-access" && !honours.roles.includes(role)) {
    throw new UsageError(
      "spawn.honours.role",
      "agent",
      `kind '${job.kind}' of '${p}' does not honour the ${role} role`,
      {
        hint: "spawn without --role, or on a host whose kind honours it",
      },
    );
  }
  if (opts.command !== undefined && !honours.command) {
    throw new UsageError(
      "spawn.honours.command",
      "agent",
      `kind '${job.kind}' of '${p}' does not honour --command`,
      {
        hint: "spawn without --command to run the harness's own",
      },
    );
  }
  if (!job.channel) {
    throw new UsageError(
      "spawn.no-channel",
      "agent",
      `kind '${job.kind}' of '${p}' declares no channel, and its agents' own channel is not driven`,
      {
        hint: "spawn on a kind that names a channel",
      },
    );
  }
  requireCommandLines(mux, "spawn.mux");
  if (job.firstTurn === "at-start" && opts.send === undefined && opts.task === undefined) {
    throw new UsageError(
      "spawn.first-prompt",
      "agent",
      `kind '${job.kind}' takes its first prompt with the start, and none was given`,
      {
        hint: `give one: mu agent spawn ${name} --host ${opts.host} --send '<text>' (or --task <id>)`,
      },
    );
  }
  if (opts.from !== undefined && !opts.worktree) {
    throw new UsageError(
      "spawn.from-alone",
      "usage",
      "--from only means something with --worktree",
      { hint: "add --worktree, or drop --from" },
    );
  }
  return job;
}
