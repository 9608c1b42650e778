import { join } from "node:path";
import { World, type WorldConfig } from "../plugin/world.js";
import type { LoadedScenario } from "./scenario.js";

// npm run scenarios -- --via-proxy: every scenario the proxy can carry runs
// with its plugin behind mu-plugin-sim --proxy, the simulated world moved
// behind it as the "real" plugin (in ${world}/real) and the fault script
// kept in front. The same files then prove the proxy passes the protocol
// through untouched and applies each fault as the sim itself would.

/** Faults that need the simulated world's insides (sim/plugin/proxy.ts applies the rest). */
const INSIDE = [
  "advanceClockMs",
  "loseHost",
  "setsidHelper",
  "groupHelper",
  "slowExitMs",
  "closeStdout",
  "leakCanary",
  "settleOnCancel",
  "restartChannel",
  // The proxy does not rewrite a reply in flight (yet).
  "patchReply",
  "execIgnoresTimeout",
  "releaseErrorsWhenGone",
  "releaseOnlyOwn",
  "acquireIgnoresFence",
  "ignoreShutdown",
  "closeStdin",
];

/** Why a scenario cannot run behind the proxy, or undefined when it can. */
export function whyNotViaProxy(s: LoadedScenario): string | undefined {
  if (s.virtualOnly !== undefined) return "it runs on the virtual engine only";
  if (s.world?.proxy || s.world?.replay) return "its world already proxies or replays";
  const faults = [
    ...(s.world?.faults ?? []),
    ...s.steps.flatMap((st) => ("world" in st ? (st.world.faults ?? []) : [])),
  ];
  for (const f of faults) {
    const kind = Object.keys(f.do)[0] ?? "";
    if (INSIDE.includes(kind)) return `a ${kind} fault acts inside the simulated world`;
    // The proxy writes the invalid line in the call's place, never the answer behind it.
    if ("invalid" in f.do && "thenAnswer" in f.do)
      return "an invalid line followed by the real answer is the simulated world's";
  }
  const words = s.steps.flatMap((st) =>
    "sh" in st ? [st.sh] : "mu" in st ? [JSON.stringify(st.mu)] : [],
  );
  if (words.some((w) => w.includes("$" + "{world}/")))
    return "it reads files in the world directory, which moved behind the proxy";
  return undefined;
}

/** The world in front (the proxy and its faults) and the simulated plugin behind it. */
export function proxiedWorlds(dir: string, config: WorldConfig): { outer: World; inner: World } {
  const { faults, ...rest } = config;
  const inner = World.create(join(dir, "real"), rest);
  const outer = World.create(dir, {
    preset: config.preset,
    instance: config.instance,
    ...(faults ? { faults } : {}),
    proxy: ["$" + "{sim}", "--world", "$" + "{world}/real"],
  });
  return { outer, inner };
}

/** A world step: faults and their releases go to the proxy, the rest to the simulated plugin. */
export function changeWorlds(outer: World, inner: World, change: Partial<WorldConfig>): void {
  const { faults, released, ...rest } = change;
  if (faults) outer.setConfig({ ...outer.config(), faults });
  // A hold is the proxy's fault: it looks for its release in its own world.
  if (released) outer.setConfig({ ...outer.config(), released });
  if (Object.keys(rest).length > 0) inner.setConfig({ ...inner.config(), ...rest });
}
