import type { Fault, WorldConfig } from "../plugin/world.js";
import type { LoadedScenario, Step } from "../runner/scenario.js";
import { needsRealEngine, runVirtual, type VirtualOutcome } from "./run-scenario.js";

// The explorer: seeded random workloads of provider-host verbs under random
// faults, run on the virtual engine, each checked against the invariants a
// user relies on. A run that breaks one is shrunk (steps dropped while it
// still breaks) and written out as a scenario file the real engine runs too.

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const FAULTS: Fault["do"][] = [
  { crash: "after" },
  { crash: "before" },
  { error: { kind: "retryable" } },
  { error: { kind: "permanent" } },
  { error: { kind: "unknown-outcome" } },
  { hang: true },
];

const CAPS: Record<string, unknown>[] = [
  {},
  { host: { acquire: { fenceKey: false } } },
  {
    host: {
      acquire: {
        lookup: false,
        fenceKey: false,
        inFlightMs: null,
        dedupe: { exact: true, windowMs: 600_000 },
      },
    },
  },
];

/** One random workload: a world and the steps mu runs in it. */
export function workload(seed: number, env: Record<string, string> = {}): LoadedScenario {
  const r = rng(seed);
  const hosts = ["h1", "h2"];
  const steps: Step[] = [{ mu: "plugin add sim -- ${sim} --world ${world}" }];
  const n = 2 + Math.floor(r() * 6);
  for (let i = 0; i < n; i++) {
    if (r() < 0.4) {
      const on = pick(r, ["host.acquire", "host.release", "host.lookup", "host.status"]);
      const fault: Fault = {
        on,
        do:
          on === "host.lookup" && r() < 0.5
            ? { reply: pick(r, [{ pending: true }, { unknown: "cannot tell" }]) }
            : pick(r, FAULTS),
      };
      steps.push({ world: { faults: [fault] } });
    }
    const h = pick(r, hosts);
    steps.push({
      mu: pick(r, [`host acquire --provider sim ${h}`, `host status ${h}`, `host release ${h}`]),
    });
  }
  // Settle: no faults, then every host looked at, so what can be resolved is.
  steps.push({ world: { faults: [] } });
  for (const h of hosts) steps.push({ mu: `host status ${h}` });
  const world: WorldConfig = {
    preset: "provider-full",
    instance: "sim-1",
    hello: { seams: pick(r, CAPS) },
  };
  return {
    scenario: `found/seed-${seed}`,
    about: `explorer seed ${seed}`,
    proves: ["explore.invariants"],
    world,
    env,
    steps,
    file: "",
  };
}

/** What must hold after any run; each broken one is a line. */
export function invariants(o: Extract<VirtualOutcome, { ran: true }>): string[] {
  const broken: string[] = [];
  for (const [effect, n] of Object.entries(o.effects)) {
    if (effect.startsWith("host.acquire:") && n > 1)
      broken.push(`${effect} was applied ${n} times: a second machine for one acquire`);
  }
  for (const [key, h] of Object.entries(o.worldHosts)) {
    if (h.released) continue;
    const known =
      o.muHosts.some((m) => m.key === key && m.state !== "released") || o.pendingKeys.includes(key);
    if (!known)
      broken.push(
        `machine ${h.handle} (key ${key}) exists, but mu neither records it nor has an intent for it`,
      );
  }
  for (const code of o.exits)
    if (code === null || ![0, 1, 2, 3, 4, 5].includes(code))
      broken.push(`an exit code outside mu's table: ${code}`);
  return broken;
}

export interface Finding {
  seed: number;
  broken: string[];
  scenario: LoadedScenario;
  /** Each mu step's exit code in the shrunk run, so the real engine checks them too. */
  exits: (number | null)[];
}

export async function check(s: LoadedScenario, twice = false): Promise<string[]> {
  if (needsRealEngine(s)) return [];
  const o = await runVirtual(s, { lenient: true });
  if (!o.ran) return [];
  const broken = invariants(o);
  if (twice) {
    // The same seed must give the same run: what each step answered, what
    // crossed the wire, what the world did.
    const again = await runVirtual(s, { lenient: true });
    const sig = (x: VirtualOutcome) =>
      x.ran ? JSON.stringify([x.exits, x.transcript, Object.values(x.effects)]) : "";
    if (sig(again) !== sig(o)) broken.push(`not deterministic: ${sig(o)} then ${sig(again)}`);
  }
  return broken;
}

/** Drops steps, one at a time from the end, for as long as the run still breaks an invariant. */
export async function shrink(s: LoadedScenario): Promise<LoadedScenario> {
  let cur = s;
  for (let changed = true; changed; ) {
    changed = false;
    // The first step registers the plugin; everything else may go.
    for (let i = cur.steps.length - 1; i >= 1; i--) {
      const next = { ...cur, steps: cur.steps.filter((_, j) => j !== i) };
      if ((await check(next)).length > 0) {
        cur = next;
        changed = true;
      }
    }
  }
  return cur;
}

export async function explore(
  first: number,
  runs: number,
  env: Record<string, string> = {},
  onRun: (seed: number) => void = () => {},
): Promise<Finding | undefined> {
  for (let seed = first; seed < first + runs; seed++) {
    onRun(seed);
    const s = workload(seed, env);
    // One run in ten is repeated, to catch a run that is not a function of its seed.
    const broken = await check(s, seed % 10 === 0);
    if (broken.length > 0) {
      const small = await shrink(s);
      const o = await runVirtual(small, { lenient: true });
      return {
        seed,
        broken: o.ran ? invariants(o) : broken,
        scenario: small,
        exits: o.ran ? o.exits : [],
      };
    }
  }
  return undefined;
}

/** A finding as a scenario file: the steps, and the invariants as expectations. */
export function toYaml(f: Finding): string {
  const s = f.scenario;
  let mu = 0;
  const lines = [
    `scenario: ${s.scenario}`,
    `about: ${JSON.stringify(`Found by the explorer (seed ${f.seed}): ${f.broken[0] ?? ""}`)}`,
    `proves: ["explore.invariants"]`,
    `world: ${JSON.stringify(s.world)}`,
    ...(s.env && Object.keys(s.env).length > 0 ? [`env: ${JSON.stringify(s.env)}`] : []),
    "steps:",
    ...s.steps.map((st) => {
      if (!("mu" in st)) return `  - ${JSON.stringify(st)}`;
      const exit = f.exits[mu++] ?? 0;
      return `  - ${JSON.stringify(exit === 0 ? st : { ...st, exit })}`;
    }),
    `  - ${JSON.stringify({ expect: { effectsPerKeyAtMost: { "host.acquire": 1 } } })}`,
    "",
  ];
  return lines.join("\n");
}
