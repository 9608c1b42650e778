import { GRACE_MS } from "../plugin/plugin-process.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { type RunContext, Session } from "./session.js";
import { profileTarget } from "./target.js";

// A start that runs one script for a few seconds and looks for escapees
// while it runs, not only once it answered: a plugin that runs each script
// in a session of its own is outside its group only during the call. The
// lines it writes meanwhile count for `messages`, so a plugin that sends
// progress notifications during a long call is caught there.

/** Long enough to be several seconds of a call in flight. */
const RUN_S = 3;
const LOOK_EVERY_MS = 250;

export async function probeDuringCall(ctx: RunContext, hello: InitializeResult): Promise<void> {
  const s = await Session.open(ctx, "containment", []);
  try {
    if (!hello.seams.link) return;
    let done = false;
    const call = s
      .call(
        "link.exec",
        {
          target: ctx.linkTarget ?? profileTarget(hello),
          script: `sleep ${RUN_S}`,
          cwd: ".",
          timeoutMs: 10_000 + RUN_S * 1000,
        },
        10_000 + RUN_S * 1000 + GRACE_MS,
      )
      .catch(() => {})
      .finally(() => {
        done = true;
      });
    while (!done) {
      s.scan();
      await Promise.race([call, s.sleep(LOOK_EVERY_MS)]);
    }
  } finally {
    await s.close();
  }
}
