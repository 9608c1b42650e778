import { parseArgs } from "node:util";
import { Channel } from "./channel.js";
import { schemaDigest, seams, VERSION } from "./declaration.js";
import { Jobs } from "./job.js";
import { Link } from "./link.js";
import { killAllLocal } from "./local-run.js";
import { nameFrom } from "./name.js";
import {
  type Params,
  PluginError,
  type Request,
  readMessages,
  reply,
  replyError,
  withDeadline,
} from "./rpc.js";
import { Ssh } from "./ssh.js";
import { mark } from "./timing.js";

// mu-plugin-ssh: mu's link (and, given --harness, job and channel) over OpenSSH.
// argv names where to connect and how, never a secret.

mark("loaded");

// bin/mu-plugin-ssh passes the path it was run as: a link to it
// (mu-plugin-box2) is a registration of its own. Not passed on to the
// plugin's own children.
const name = nameFrom(process.env.MU_SSH_STARTED_AS);
delete process.env.MU_SSH_STARTED_AS;

const { values } = parseArgs({
  options: {
    dest: { type: "string" },
    port: { type: "string", short: "p" },
    identity: { type: "string", short: "i" },
    config: { type: "string", short: "F" },
    option: { type: "string", short: "o", multiple: true },
    home: { type: "string" },
    instance: { type: "string" },
    harness: { type: "string" },
  },
});
if (!values.dest) {
  process.stderr.write("mu-plugin-ssh: --dest user@host is required\n");
  process.exit(2);
}
const dest = values.dest;
const ssh = new Ssh({
  dest,
  port: values.port,
  identity: values.identity,
  config: values.config,
  options: values.option ?? [],
});
ssh.warm();
const root = values.home ?? ".";
const link = new Link(ssh, root);
const jobs = values.harness !== undefined ? new Jobs(ssh, root, values.harness) : undefined;
const channel = jobs ? new Channel(jobs, name) : undefined;
const instance = (
  values.instance ?? `${dest}:${values.port ?? "22"}${values.home ? `:${root}` : ""}`
).slice(0, 128);

const inFlight = new Map<number | string, AbortController>();
/** Calls a stop lets finish (inside its bound) rather than cut: an effect cut halfway helps no one. */
const finishing = new Set<number | string>();
let stopping = false;

async function answer(method: string, p: Params, signal: AbortSignal): Promise<unknown> {
  switch (method) {
    case "initialize":
      return {
        protocol: 1,
        plugin: { name, version: VERSION },
        instance,
        schema: schemaDigest(),
        seams: seams(values.harness !== undefined, name),
      };
    case "link.exec":
      return link.exec(p, signal);
    case "link.fetch":
      return link.fetch(p, signal);
    case "link.push":
      return link.push(p, signal);
    case "link.checkSteps":
      return link.checkSteps(p, signal);
  }
  if (jobs && channel)
    switch (method) {
      case "job.start":
        return jobs.start(p, signal);
      case "job.lookup":
        return jobs.lookup(p, signal);
      case "job.status":
        return jobs.status(p, signal);
      case "job.stop":
        return jobs.stop(p, signal);
      case "job.attach":
        return jobs.attach(p);
      case "job.checkSteps":
        return jobs.checkSteps(p, signal);
      case "channel.readStates":
        return channel.readStates(p, signal);
      case "channel.baseline":
        return channel.baseline(p, signal);
      case "channel.receipt":
        return channel.receipt(p, signal);
      case "channel.lastRun":
        return channel.lastRun(p, signal);
      case "channel.watch":
        return channel.watch(p, signal);
      case "channel.send":
        return channel.deliver(p, false, signal);
      case "channel.fresh":
        return channel.deliver(p, true, signal);
      case "channel.interrupt":
        return channel.interrupt(p, signal);
      case "channel.abort":
        return channel.abort(p, signal);
    }
  throw new PluginError("permanent", `mu-plugin-ssh: no method ${method}`);
}

/** EOF or shutdown: cancel link calls (their remote kills run first) and watches, let the rest finish, then go. */
function stop(): void {
  if (stopping) return;
  stopping = true;
  for (const [id, c] of inFlight) if (!finishing.has(id)) c.abort();
  channel?.cancelAll();
  // The hard bound stays well inside mu's 5 s grace; the last call to
  // finish ends the plugin at once (onMessage's finally).
  setTimeout(bye, 4_000).unref();
  if (inFlight.size === 0) bye();
}

function bye(): void {
  mark("exit");
  ssh.close();
  killAllLocal();
  process.exit(0);
}

function onMessage(m: Request): void {
  const method = m.method ?? "";
  if (method === "shutdown") {
    mark("shutdown");
    stop();
    return;
  }
  if (method === "$/cancel") {
    const c = (m.params ?? {}) as { id?: number | string; watchId?: string };
    if (c.id !== undefined && !finishing.has(c.id)) inFlight.get(c.id)?.abort();
    if (c.watchId !== undefined) channel?.cancelWatch(c.watchId);
    return;
  }
  if (m.id === undefined || stopping) return;
  const id = m.id;
  const ctl = new AbortController();
  inFlight.set(id, ctl);
  if (!method.startsWith("link.")) finishing.add(id);
  const params = m.params ?? {};
  mark(`call ${method}`);
  withDeadline(params, () => answer(method, params, ctl.signal))
    .then(
      (r) => reply(id, r),
      (e) => replyError(id, e),
    )
    .then(() => mark(`reply ${method}`))
    .finally(() => {
      inFlight.delete(id);
      finishing.delete(id);
      if (stopping && inFlight.size === 0) bye();
    });
}

// mu gone (SIGKILLed, say) while a reply was on its way: the write fails
// with EPIPE. Unhandled, that killed the plugin on the spot and left its
// ControlMaster running, reparented to init; stop ends the master too.
process.stdout.on("error", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("SIGHUP", stop);
readMessages(onMessage, stop);
