import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muChild, tempState } from "./helpers.js";

// `mu plugin check` against a stand-alone plugin of test/fixtures/: each
// fixture is installed and registered the same way, and a run is read as
// one verdict a check.

export interface Registered {
  /** The fixture's backend directory (its --home). */
  home: string;
  env: Record<string, string>;
  done(): void;
}

/**
 * test/fixtures/<fixture> installed as mu-plugin-<name> and registered,
 * broken as asked; `args` go to the plugin ahead of --break.
 */
export async function registered(
  fixture: string,
  name: string,
  broken?: string,
  args: readonly string[] = [],
): Promise<Registered> {
  // Named so the suite's teardown finds anything this test leaves running.
  const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
  const exe = join(dir, `mu-plugin-${name}`);
  copyFileSync(join(packageRoot(), "test/fixtures", fixture), exe);
  chmodSync(exe, 0o755);
  const home = join(dir, "backend");
  mkdirSync(home);
  const state = tempState();
  const argv = [
    exe,
    ...["--schema", join(packageRoot(), "schemas/plugin-protocol-v1.json")],
    ...["--home", home, ...args],
    ...(broken ? ["--break", broken] : []),
  ];
  const add = await muChild(["plugin", "add", name, "--", ...argv], state.env);
  expect(add.stderr).toBe("");
  return {
    home,
    env: state.env,
    done() {
      state.done();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Verdicts = Record<string, { mark: string; detail: string }>;

const LINE = /^(ok {2}|FAIL|skip) {2}(\S+) +(.*)$/;

/** The check's lines, by id: its mark and what it said. */
export function results(stdout: string): Verdicts {
  const out: Verdicts = {};
  for (const l of stdout.split("\n")) {
    const m = LINE.exec(l);
    if (m?.[1] && m[2]) out[m[2]] = { mark: m[1].trim(), detail: m[3] ?? "" };
  }
  return out;
}

export interface Checked {
  code: number | null;
  stdout: string;
  stderr: string;
  got: Verdicts;
}

/** mu with these words (a `plugin check`) as a child process, its verdicts read. */
export async function checking(argv: string[], env: Record<string, string>): Promise<Checked> {
  const r = await muChild(argv, env);
  return { ...r, got: results(r.stdout) };
}

/**
 * The run failed exactly `fails`, in that order, each saying `headline`,
 * and mu's one line on stderr counts and names them with exit 4.
 */
export function expectFailed(
  r: Checked,
  name: string,
  fails: readonly string[],
  headline: RegExp,
): void {
  const failed = Object.entries(r.got).filter(([, v]) => v.mark === "FAIL");
  expect(
    failed.map(([id]) => id),
    r.stdout,
  ).toEqual([...fails]);
  for (const id of fails) expect(r.got[id]?.detail, r.stdout).toMatch(headline);
  expect(r.code).toBe(4);
  expect(r.stderr).toMatch(
    new RegExp(
      `^mu: check: '${name}' failed ${fails.length} of \\d+ checks \\(${fails.join(", ").replaceAll(".", "\\.")}\\); `,
    ),
  );
}

/** The evidence lines printed under a check's line. */
function evidenceOf(stdout: string, id: string): string[] {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => new RegExp(`^(ok {2}|FAIL|skip) {2}${id} `).test(l));
  const out: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("        ")) break;
    out.push(l.slice(8));
  }
  return out;
}

/**
 * The evidence under a check's line matches these patterns in order: all of
 * it, or with `leading`, its first lines (where how many follow varies).
 */
export function expectEvidence(
  stdout: string,
  id: string,
  patterns: readonly RegExp[],
  leading = false,
): void {
  const shown = evidenceOf(stdout, id);
  if (!leading) expect(shown, stdout).toHaveLength(patterns.length);
  for (const [i, e] of patterns.entries()) expect(shown[i], stdout).toMatch(e);
}
