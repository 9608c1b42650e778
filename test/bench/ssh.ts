import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { breakdown } from "./ssh-breakdown.js";
import { type Pair, pairTable, runPair, type Step } from "./ssh-pairs.js";
import { git, type SshWorld, sshWorld } from "./ssh-setup.js";

// The ssh part of `npm run bench`: mu's verbs through mu-plugin-ssh against
// a private sshd on 127.0.0.1, each paired with the bare ssh (or git push
// over ssh) doing the least the verb needs.

const EXEC_GOAL_MS = 150;
const TURN_GOAL = 2;
const CHECK_GOAL_MS = 15_000;

function pairs(w: SshWorld): Pair[] {
  const mu = (args: string[]): Step => ({
    argv: [process.execPath, join(packageRoot(), "dist/host/cli/mu.cjs"), ...args],
  });
  const ssh = (n = 1): Step[] => Array.from({ length: n }, () => ({ argv: [...w.ssh, "true"] }));
  return [
    {
      name: "`host exec box -- true`",
      bareIs: "`ssh box true`",
      bare: () => ssh(),
      mu: () => [mu(["host", "exec", "box", "--", "true"])],
      goal: {
        text: `goal: at most +${EXEC_GOAL_MS} ms`,
        ok: (_m, _b, added) => added <= EXEC_GOAL_MS,
      },
    },
    {
      name: "`host push box` (a new commit)",
      bareIs: "`git push` over ssh (a new commit)",
      prep: (i) => git(w.checkout, w.gitEnv, "commit", "-q", "--allow-empty", "-m", `bench ${i}`),
      bare: (i) => [
        {
          argv: ["git", "push", "-q", `box:${w.bareRepo}`, `HEAD:refs/heads/b${i}`],
          env: w.gitEnv,
        },
      ],
      mu: () => [mu(["host", "push", "box"])],
    },
    {
      name: "`agent spawn sN --host box`",
      bareIs: "`ssh box true`",
      bare: () => ssh(),
      mu: (i) => [mu(["agent", "spawn", `s${i}`, "--host", "box"])],
    },
    {
      name: "`agent spawn wN --host box --worktree`",
      bareIs: "`ssh box true` twice (the tree, the job)",
      bare: () => ssh(2),
      mu: (i) => [mu(["agent", "spawn", `w${i}`, "--host", "box", "--worktree"])],
    },
    {
      name: "a turn: `agent send t …` then `wait t`",
      bareIs: "`ssh box true` twice",
      bare: () => ssh(2),
      mu: (i) => [mu(["agent", "send", "t", `turn ${i}`]), mu(["wait", "t", "--timeout", "60"])],
      goal: {
        text: `goal: at most ${TURN_GOAL}x`,
        ok: (m, b) => m / b <= TURN_GOAL,
      },
    },
    {
      name: "`agent read t`",
      bareIs: "`ssh box true`",
      bare: () => ssh(),
      mu: () => [mu(["agent", "read", "t"])],
    },
    {
      name: "`agent close sN`",
      bareIs: "`ssh box true`",
      bare: () => ssh(),
      mu: (i) => [mu(["agent", "close", `s${i}`])],
    },
    {
      name: "`agent close wN` (with the final collect)",
      bareIs: "`ssh box true` twice (the stop, the fetch)",
      bare: () => ssh(2),
      mu: (i) => [mu(["agent", "close", `w${i}`])],
    },
  ];
}

function checkTime(
  w: SshWorld,
  args: string[],
): { ms: number; ok: boolean; last: string; slowest: string } {
  const t0 = process.hrtime.bigint();
  const mu = join(packageRoot(), "dist/host/cli/mu.cjs");
  const r = spawnSync(
    process.execPath,
    [mu, "plugin", "check", "ssh", "--host", "box", "--json", ...args],
    { cwd: w.checkout, env: w.env, encoding: "utf8", timeout: 300_000 },
  );
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  let slowest = "(no JSON)";
  let last = r.stderr.trim().split("\n").pop() ?? "";
  try {
    type Check = { id: string; ms: number; result: string; detail: string };
    const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
    // A failure's own detail says why, where the summary line only names it.
    const failed = checks.filter((c) => c.result === "fail");
    if (failed.length > 0) last = failed.map((c) => `${c.id}: ${c.detail}`).join("; ");
    slowest = [...checks]
      .sort((x, y) => y.ms - x.ms)
      .slice(0, 4)
      .map((c) => `${c.id} ${(c.ms / 1000).toFixed(1)} s`)
      .join(", ");
  } catch {
    // a run that printed no JSON says why on stderr (last)
  }
  return { ms, ok: r.status === 0, last, slowest };
}

export async function sshReport(dir: string, rounds: number): Promise<string> {
  const before = loadavg()[0] ?? 0;
  const w = await sshWorld(dir);
  try {
    // The turn's agent, spawned once, outside the timing.
    w.mu(["agent", "spawn", "t", "--host", "box"]);
    const results = pairs(w).map((p) => runPair(p, rounds, w));
    const link = checkTime(w, []);
    const all = checkTime(w, ["--seam", "job", "--seam", "channel"]);
    // The goal is for the check as a plugin author first runs it (the link
    // seam); the run with every seam is timed for the record.
    const checkRow = (what: string, c: ReturnType<typeof checkTime>, goal: boolean) => {
      const failed = c.ok ? "" : `it failed: ${c.last.slice(0, 400)}`;
      const verdict = goal
        ? `${c.ok && c.ms <= CHECK_GOAL_MS ? "ok" : "MISSED"} (goal: under ${CHECK_GOAL_MS / 1000} s${failed && `; ${failed}`})`
        : failed || "passed (no goal)";
      return `| ${what} | ${(c.ms / 1000).toFixed(1)} s | ${c.slowest} | ${verdict} |`;
    };
    const scratch = join(dir, "breakdown");
    mkdirSync(scratch, { recursive: true });
    const timelines = [
      breakdown(w, ["host", "exec", "box", "--", "true"], scratch),
      breakdown(w, ["agent", "send", "t", "one more"], scratch),
      breakdown(w, ["wait", "t", "--timeout", "60"], scratch),
    ];
    w.mu(["agent", "close", "t"]);
    const after = loadavg()[0] ?? 0;
    return [
      `Paired runs, ${rounds} rounds each, medians; load ${before.toFixed(1)} before and ${after.toFixed(1)} after. The bare side uses the same client config (\`ssh -F cfg -o BatchMode=yes\`) and pays its own handshake, as mu does.`,
      "",
      pairTable(results),
      "",
      "| conformance run | wall | its slowest checks | goal |",
      "|---|---|---|---|",
      checkRow("`mu plugin check ssh --host box`", link, true),
      checkRow("`mu plugin check ssh --host box --seam job --seam channel`", all, false),
      "",
      "Where the time goes (mu's trace and the plugin's MU_SSH_TIMING milestones on one clock):",
      "",
      timelines.join("\n\n"),
    ].join("\n");
  } finally {
    await w.done();
  }
}
