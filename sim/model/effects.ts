// Which effects the world must have applied for a verb that the model
// judged in calm: a refusal or a not-found applies none; a success applies
// exactly its own effect, once (a keyed one may never be applied twice).

/** Effect kinds by the prefix of the sim's effect keys. */
const KINDS = [
  "host.acquire",
  "host.release",
  "job.start",
  "job.stop",
  "channel.send",
  "channel.fresh",
  "channel.command",
];

/** How many effects of each kind one successful verb applies: the allowed counts. */
function ownEffects(words: string[]): Record<string, number[]> | undefined {
  const [group, verb] = words;
  if (group === "host" && verb === "acquire") return { "host.acquire": [1] };
  if (group === "host" && verb === "release") return { "host.release": [0, 1] };
  if (group === "host" && verb !== "exec") return {};
  if (group === "agent" && verb === "spawn")
    // A first prompt goes with the start (at-start) or as a send after it.
    return { "job.start": [1], "channel.send": words.includes("--send") ? [0, 1] : [0] };
  if (group === "agent" && verb === "send") {
    if (words.includes("--fresh")) return { "channel.fresh": [1] };
    return { "channel.send": [1] };
  }
  if (group === "agent" && verb === "command") return { "channel.command": [1] };
  if (group === "agent" && verb === "close") return { "job.stop": [1] };
  if (group === "agent" && ["read", "list", "forget", "reattach"].includes(verb ?? "")) return {};
  if (group === "state" || group === "plugin" || group === "wait") return {};
  return undefined;
}

function count(effects: Record<string, number>, kind: string): number {
  let n = 0;
  for (const [k, v] of Object.entries(effects)) if (k.startsWith(`${kind}:`)) n += v;
  return n;
}

/** What differs from the effects the verb must have applied, or undefined when they match. */
export function effectsDiverge(
  words: string[],
  exit: number,
  before: Record<string, number>,
  after: Record<string, number>,
): string | undefined {
  const own = exit === 0 ? ownEffects(words) : exit >= 2 && exit <= 4 ? {} : undefined;
  if (!own) return undefined;
  for (const kind of KINDS) {
    const n = count(after, kind) - count(before, kind);
    const want = own[kind] ?? [0];
    if (!want.includes(n))
      return `applied ${n} ${kind} effect(s), where the model expects ${want.join(" or ")}`;
  }
  return undefined;
}
