import type { Swarm } from "./swarm.js";
import { type Rand, weighted } from "./workload-script.js";

// The agent workload's alphabet: every agent verb it may draw, by weight,
// and the call each one makes that a fault should meet.

/** The call a verb makes that matters most, so a fault can meet it. */
export function callOf(mu: string): string | undefined {
  const w = mu.split(" ");
  if (w[0] === "wait") return "channel.watch";
  if (w[1] === "spawn") return "job.start";
  if (w[1] === "close") return "job.stop";
  if (w[1] === "reattach") return "job.attach";
  if (w[1] === "read" || w[1] === "list") return "channel.status";
  if (w[1] === "send") return w.includes("--fresh") ? "channel.fresh" : "channel.send";
  if (["command", "interrupt", "abort", "answer"].includes(w[1] ?? "")) return `channel.${w[1]}`;
  return undefined;
}

/** Every verb an agent workload may run, by weight: the whole agent alphabet. */
export function agentVerb(
  r: Rand,
  a: string,
  other: string,
  atStart: boolean,
  n: () => number,
  host: string,
  swarm: Swarm,
): string {
  const first = atStart ? ` --send first-${n()}` : "";
  const on = ([kind]: readonly [string, () => string]) => !swarm.verbs || swarm.verbs.has(kind);
  return weighted<readonly [string, () => string]>(
    r,
    [
      [3, ["spawn", () => `agent spawn ${a} --host ${host}${first}`]],
      [1, ["spawn", () => `agent spawn ${a} --host ${host} --send first-${n()}`]],
      [3, ["send", () => `agent send ${a} hello-${n()}`]],
      [1, ["steer", () => `agent send ${a} steer-${n()} --steer`]],
      [1, ["fresh", () => `agent send ${a} fresh-${n()} --fresh`]],
      [1, ["force", () => `agent send ${a} force-${n()} --force`]],
      [2, ["command", () => `agent command ${a} compact --instructions c-${n()}`]],
      [1, ["interrupt", () => `agent interrupt ${a} stop-${n()}`]],
      [1, ["abort", () => `agent abort ${a}`]],
      [1, ["answer", () => `agent answer ${a} y`]],
      [2, ["read", () => `agent read ${a}`]],
      [1, ["list", () => "agent list"]],
      [1, ["state", () => "state"]],
      [1, ["wait", () => `wait ${a} --timeout 2`]],
      [1, ["wait", () => `wait ${a} ${other} --timeout 2`]],
      [1, ["wait", () => `wait ${a} ${other} --any --timeout 2`]],
      [1, ["reattach", () => `agent reattach ${a}`]],
      [2, ["close", () => `agent close ${a}`]],
      [1, ["remove", () => (host === "box" ? "host rm box" : `host release ${host}`)]],
    ] as const,
    on,
  )[1]();
}
