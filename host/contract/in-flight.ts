import { canonical } from "../plugin/load-rules.js";
import type { KeyCaps } from "../protocol/declaration.js";
import { holding } from "./host-proof.js";
import { type Machine, newKey } from "./host-seam.js";
import type { RunContext, Session } from "./session.js";
import { CHECK_HOST } from "./target.js";
import { CheckFailed, describeCall, must, type Outcome, pass, skip } from "./verdict.js";

// inFlightMs is the plugin's word that an acquire lands within that long of
// being sent, or never: past it, mu takes an unfenced none as final. The
// check watches an acquire in flight from a second process, asking lookup
// until the acquire has answered. A none asked past the bound, followed by
// the machine after all, is the broken word. The acquiring process is left
// to answer: an effect that lands late has to be seen landing.

const EFFECT_MS = 60_000;
/** A tenth of the bound between lookups, within these: a slow provider is not asked hundreds of times. */
const POLL_MS = { min: 200, max: 5_000 };
const NOWHERE = { host: { name: CHECK_HOST } };

interface Asked {
  /** When the lookup was sent, counted from the acquire's send. */
  sentMs: number;
  answeredMs: number;
  reply: { found?: { handle?: string }; none?: true };
  /** Sent once the acquire had answered. */
  afterAnswer: boolean;
}

export async function hostInFlight(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
  caps: KeyCaps,
): Promise<Outcome> {
  const bound = caps.inFlightMs;
  if (typeof bound !== "number") return skip("the acquire declares no inFlightMs");
  if (!caps.lookup)
    return skip("inFlightMs bounds what a lookup's none proves; no lookup declared");
  const watcher = await s.again();
  const key = newKey(ctx);
  let m: Machine | undefined;
  try {
    return await holding(
      s,
      () => m,
      async () => {
        const sender = await s.again();
        try {
          const held: { machine?: Machine } = {};
          try {
            return await watch(s, sender, watcher, key, params, bound, held);
          } finally {
            m = held.machine;
            // No machine known: the key is released all the same, in case one comes.
            if (!m)
              await s.call("host.release", { target: NOWHERE, key }, EFFECT_MS).catch(() => {});
          }
        } finally {
          await sender.close();
        }
      },
    );
  } finally {
    await watcher.close();
  }
}

async function watch(
  s: Session,
  sender: Session,
  watcher: Session,
  key: string,
  params: Record<string, string>,
  bound: number,
  held: { machine?: Machine },
): Promise<Outcome> {
  let settled: { atMs: number; handle?: string; error?: string } | undefined;
  const call = sender.call("host.acquire", { target: NOWHERE, key, params }, EFFECT_MS);
  // Taken once the request is written: a lookup's delay is counted from no earlier than the acquire's send.
  const t0 = s.now();
  const since = () => s.now() - t0;
  const acquired = call.then(
    (r) => {
      settled = { atMs: since(), handle: (r as { handle?: string }).handle };
      return r;
    },
    (err) => {
      settled = { atMs: since(), error: describeCall(err) };
      return undefined;
    },
  );
  const asked: Asked[] = [];
  for (;;) {
    const done = settled !== undefined;
    const sentMs = since();
    const reply = (await must(
      "host.lookup",
      watcher.call("host.lookup", { target: NOWHERE, key, fence: false }),
    )) as Asked["reply"];
    asked.push({ sentMs, answeredMs: since(), reply, afterAnswer: done });
    if (reply.found || done) break;
    await s.sleep(Math.min(POLL_MS.max, Math.max(POLL_MS.min, Math.floor(bound / 10))));
  }
  const result = await acquired;
  const handle = settled?.handle ?? asked.find((a) => a.reply.found)?.reply.found?.handle;
  held.machine = handle
    ? {
        key,
        acquired: (result ?? { handle }) as Machine["acquired"],
        target: { host: { name: CHECK_HOST, handle, instance: s.hello.instance } },
        released: false,
      }
    : undefined;
  const nones = asked.filter((a) => a.reply.none && !a.afterAnswer);
  const landedMs = asked.find((a) => a.reply.found)?.answeredMs ?? settled?.atMs;
  const found = asked.find((a) => a.reply.found);
  const show = [
    `${asked.length} lookups from +0 to +${asked.at(-1)?.sentMs} ms, ${nones.length} of them none before the acquire answered`,
    ...(found ? [`lookup sent at +${found.sentMs} ms: ${canonical(found.reply)}`] : []),
    `acquire answered at +${settled?.atMs} ms: ${settled?.handle ?? settled?.error}`,
  ];
  if (handle && asked.some((a) => a.reply.none && a.afterAnswer))
    throw new CheckFailed(
      "host.lookup from another process answered none after the acquire had answered with a machine",
      show,
    );
  const late = nones.filter((a) => a.sentMs > bound).at(-1);
  if (handle && late)
    throw new CheckFailed(
      `inFlightMs is ${bound}, yet a host.lookup sent ${late.sentMs} ms after the acquire was sent answered none, and the machine came up ${landedMs} ms after the acquire was sent`,
      [`lookup sent at +${late.sentMs} ms: ${canonical(late.reply)}`, ...show],
    );
  const lastNone = nones.at(-1);
  if (!lastNone)
    return pass(
      `not provoked: the acquire had landed (${landedMs} ms) before a lookup from another process could see it in flight`,
    );
  return pass(
    handle
      ? `lookups from another process answered none up to ${lastNone.sentMs} ms after the acquire was sent, then it landed at ${landedMs} ms, inside the declared inFlightMs ${bound}`
      : `the acquire answered ${settled?.error} and lookups from another process found nothing (last sent at ${lastNone.sentMs} ms)`,
  );
}
