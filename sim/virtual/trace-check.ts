import { argv, type LoadedScenario } from "../runner/scenario.js";

// What a trace may hold: a person asks for a trace to show how mu talked to a
// plugin, not what they told their agents. Unless MU_TRACE_CONTENT=1, no
// free text a traced step carried (a spawn's command line or first prompt,
// a message, a command's instructions, an answer's keys) may be in the trace as written.

/** Options whose value is free text. */
const TEXT_OPTIONS = ["--command", "--send", "--instructions"];

/** Verbs whose words after the agent are a message. */
const MESSAGE_VERBS = ["send", "interrupt"];

/** The free texts a step's words carry. */
function textsOf(words: string[]): string[] {
  const texts: string[] = [];
  words.forEach((w, i) => {
    if (TEXT_OPTIONS.includes(w) && words[i + 1] !== undefined) texts.push(words[i + 1] as string);
  });
  if (words[0] === "agent" && MESSAGE_VERBS.includes(words[1] ?? "")) {
    const text = words[3];
    if (text !== undefined && !text.startsWith("-")) texts.push(text);
  }
  // An answer's keys, each: what a person types into an agent's dialog.
  if (words[0] === "agent" && words[1] === "answer")
    texts.push(...words.slice(3).filter((k) => !k.startsWith("-")));
  // Short words could be in a trace for other reasons (a name, a flag).
  return texts.filter((t) => t.length >= 8);
}

export function traceLeaks(s: LoadedScenario, traces: readonly string[]): string[] {
  if (traces.length === 0) return [];
  const all = traces.join("\n");
  const leaks: string[] = [];
  for (const st of s.steps) {
    if (!("mu" in st)) continue;
    const env = { ...s.env, ...st.env };
    if (!env.MU_TRACE_DIR || env.MU_TRACE_CONTENT === "1") continue;
    for (const t of textsOf(argv(st.mu)))
      if (all.includes(t))
        leaks.push(`the trace of '${argv(st.mu).join(" ")}' holds '${t}' in clear`);
  }
  return leaks;
}
