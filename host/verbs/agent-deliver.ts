import type { Io } from "../cli/io.js";
import { RefusedError, UsageError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { type Delivery, deliver, learnIncarnation, newMsgId } from "../jobs/deliver.js";
import { jobPlugin, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import type { Seams } from "../protocol/declaration.js";
import { openStore } from "../store/index.js";
import { refuseWhileWriterLives } from "./spawn/record.js";
import { closeCommand, spawnAgainCommand, spawnAgainOrClose } from "./spawn/remedy.js";
import { withPlugins } from "./with-plugins.js";

// The deliveries: send (follow-up, steer, fresh), command, interrupt, abort
// and answer. A capability the channel declares none or false refuses its
// verb before any call, with the same typed error each time.

type Caps = Record<string, unknown>;

function unsupported(what: string, cap: string, value: unknown): UsageError {
  return new UsageError(
    "delivery.unsupported",
    "agent",
    `the agent's channel cannot ${what} (its ${cap} is ${JSON.stringify(value)})`,
    { hint: "see the plugin's channel caps (channelCaps) in: mu plugin list --json" },
  );
}

export interface SendOptions {
  workstream?: string;
  steer?: boolean;
  fresh?: boolean;
  force?: boolean;
}

type Verb =
  | { kind: "send"; text: string; opts: SendOptions }
  | { kind: "command"; command: string; instructions?: string; force?: boolean }
  | { kind: "interrupt"; text: string; timeoutMs: number }
  | { kind: "abort"; timeoutMs: number }
  | { kind: "answer"; keys: string[]; force?: boolean };

const DEFAULT_TURN_STOP_MS = 10_000;

/** The delivery a verb asks for, refused here when the channel cannot do it. */
function delivery(v: Verb, caps: Caps, inc: number | null): Delivery {
  const expect = inc === null ? {} : { expectIncarnation: inc };
  switch (v.kind) {
    case "send": {
      if (v.opts.steer && v.opts.fresh)
        throw new UsageError("send.steer-fresh", "usage", "give --steer or --fresh, not both", {
          hint: "--steer joins the running turn; --fresh starts a new conversation",
        });
      if (v.opts.steer && caps.steer === "none")
        throw unsupported("steer a running turn", "steer", caps.steer);
      if (v.opts.fresh) {
        if (caps.fresh !== "in-place")
          throw unsupported("start a fresh conversation in place", "fresh", caps.fresh);
        return {
          method: "channel.fresh",
          params: { text: v.text, force: v.opts.force ?? false, ...expect },
          withMsgId: true,
        };
      }
      return {
        method: "channel.send",
        params: {
          text: v.text,
          mode: v.opts.steer ? "steer" : "followUp",
          force: v.opts.force ?? false,
          firstPrompt: false,
          ...expect,
        },
        withMsgId: true,
      };
    }
    case "command":
      if (caps.command !== true)
        throw unsupported("run a harness command", "command", caps.command ?? false);
      return {
        method: "channel.command",
        params: {
          name: v.command,
          ...(v.instructions !== undefined ? { instructions: v.instructions } : {}),
          force: v.force ?? false,
          ...expect,
        },
        withMsgId: false,
      };
    case "interrupt":
      if (caps.interrupt === "none" || caps.interrupt === undefined)
        throw unsupported("interrupt a turn", "interrupt", caps.interrupt ?? "none");
      return {
        method: "channel.interrupt",
        params: { text: v.text, timeoutMs: v.timeoutMs, ...expect },
        withMsgId: true,
      };
    case "abort":
      if (caps.interrupt === "none" || caps.interrupt === undefined)
        throw unsupported("abort a turn", "interrupt", caps.interrupt ?? "none");
      return { method: "channel.abort", params: { timeoutMs: v.timeoutMs }, withMsgId: false };
    case "answer":
      if (caps.answer !== true)
        throw unsupported("answer a dialog", "answer", caps.answer ?? false);
      return {
        method: "channel.answer",
        params: { keys: v.keys, force: v.force ?? false },
        withMsgId: false,
      };
  }
}

async function run(io: Io, name: string, ws: string, v: Verb): Promise<void> {
  const store = openStore(io.ports);
  const found = await store.read((db) => findAgent(db, ws, name));
  const seams = (found.host.reg.declaration as { seams?: Seams } | undefined)?.seams ?? {};
  const caps = (seams.channel?.caps ?? {}) as Caps;
  if (found.host.provider?.state === "lost") {
    throw new RefusedError(
      "delivery.host-lost",
      "agent",
      `${ws}/${name} ran on host ${found.job.host}, which is lost; it takes no delivery`,
      {
        hint: `close it: mu agent close ${name} -w ${ws}`,
      },
    );
  }
  // Refused before the plugin starts: a capability it lacks is never called.
  delivery(v, caps, found.agent?.channelInc ?? null);
  await withPlugins(io, async (sup) => {
    await resolveAgent(io, store, sup, ws, name, `mu agent read ${name} -w ${ws}`);
    const { job, agent, host } = await store.read((db) => findAgent(db, ws, name));
    if (job.state === "running" && agent?.state !== "live") {
      // A spawn cut short after job.start: the way on is the spawn again, as
      // mu state says, unless that spawn is still at work.
      refuseWhileWriterLives(io, job);
      throw new RefusedError(
        "delivery.spawn-unfinished",
        "agent",
        `${ws}/${name}'s job runs, but its spawn did not finish (the agent has no view)`,
        {
          hint: spawnAgainOrClose(
            "resume",
            spawnAgainCommand(ws, name, job.host),
            closeCommand(ws, name),
          ),
        },
      );
    }
    if (job.state === "stopped") {
      throw new RefusedError(
        "delivery.stopped",
        "agent",
        `${ws}/${name}'s job is stopped and owes its final collect; it takes no delivery`,
        { hint: `finish the close: ${closeCommand(ws, name)}` },
      );
    }
    if (job.state !== "running" || agent?.state !== "live") {
      throw new RefusedError(
        "delivery.not-running",
        "agent",
        `${ws}/${name} is not running (its job is ${job.state})`,
        {
          hint: `see: mu agent list`,
        },
      );
    }
    const { hello } = await jobPlugin(sup, host, job);
    const d = delivery(v, (hello.seams.channel?.caps ?? {}) as Caps, agent.channelInc);
    const msgId = d.withMsgId ? newMsgId(io.ports) : `${v.kind}-${newMsgId(io.ports).slice(4)}`;
    const target = jobTarget(host, job, agent.incarnation);
    const call = { io, store, sup, h: host, j: job, target };
    const { result } = await deliver(call, hello.seams.channel?.name ?? "", d, msgId);
    const r = (result ?? {}) as Record<string, unknown>;
    if (d.method === "channel.fresh" && r.incarnation === undefined) await learnIncarnation(call);
    const what =
      v.kind === "abort"
        ? `aborted ${ws}/${name} (was ${String(r.before)}, now ${String(r.after)}${r.aborted ? ", turn stopped" : ""})`
        : v.kind === "answer"
          ? `answered ${ws}/${name} (${(v.keys ?? []).join(" ")}; ${String(r.ack)})`
          : v.kind === "interrupt"
            ? `interrupted ${ws}/${name} with ${msgId} (${r.wasBusy ? "was busy" : "was idle"})`
            : `sent ${msgId} to ${ws}/${name} (baseline ${String(r.baseline ?? "?")})`;
    io.out(`${what}\n`);
  });
}

export const agentSend = (io: Io, name: string, text: string, opts: SendOptions) =>
  run(io, name, opts.workstream ?? "main", { kind: "send", text, opts });

export const agentCommand = (
  io: Io,
  name: string,
  command: string,
  opts: { workstream?: string; instructions?: string; force?: boolean },
) => run(io, name, opts.workstream ?? "main", { kind: "command", command, ...opts });

export const agentInterrupt = (io: Io, name: string, text: string, opts: { workstream?: string }) =>
  run(io, name, opts.workstream ?? "main", {
    kind: "interrupt",
    text,
    timeoutMs: DEFAULT_TURN_STOP_MS,
  });

export const agentAbort = (io: Io, name: string, opts: { workstream?: string }) =>
  run(io, name, opts.workstream ?? "main", { kind: "abort", timeoutMs: DEFAULT_TURN_STOP_MS });

export const agentAnswer = (
  io: Io,
  name: string,
  keys: string[],
  opts: { workstream?: string; force?: boolean },
) => run(io, name, opts.workstream ?? "main", { kind: "answer", keys, ...opts });
