// What a plugin inherits: mu's environment minus what is mu's alone. The
// state paths would let a plugin reach mu's DB; the agent identity and
// control socket belong to the agent mu itself may be running as; the crash
// hook is the testbed's handle on mu, not on the plugin.
export const LOCAL_ONLY = [
  "MU_DB_PATH",
  "MU_STATE_DIR",
  "MU_SYNC_DIR",
  "MU_AGENT",
  "MU_AGENT_NAME",
  "MU_WORKSTREAM",
  "MU_INCARNATION",
  "MU_CTL_SOCKET",
  "MU_CONTROL_SOCKET",
  "MU_CRASH_AT",
  "MU_TESTBED_PLANT",
  "MU_TESTBED_PAUSE",
  "MU_CLOCK_OFFSET_MS",
] as const;

export function pluginEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const drop = new Set<string>(LOCAL_ONLY);
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !drop.has(k)) out[k] = v;
  }
  return out;
}
