import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { nothingMade } from "../contract/made.js";
import { cleanupLines, junit, line, summary } from "../contract/report.js";
import type { RunContext } from "../contract/session.js";
import { subreaperLauncher } from "../contract/subreaper.js";
import { type CheckedSeam, runSuite, type SuiteOptions } from "../contract/suite.js";
import { uncovered } from "../contract/uncovered.js";
import type { Cleanup, Verdict } from "../contract/verdict.js";
import { bounded } from "../env-ms.js";
import { NotFoundError, RefusedError, UnavailableError, UsageError } from "../errors.js";
import { findLinkHost } from "../hosts/link-host.js";
import { getPlugin } from "../plugin/registry.js";
import { terminator } from "../plugin/terminator.js";
import { openStore } from "../store/index.js";

// mu plugin check: the contract suite, run against a registered plugin the
// way mu would run it. It writes nothing to mu's database; what it creates
// through the plugin it releases again.

export interface CheckOptions {
  seam?: string[];
  param?: string[];
  repeat?: string;
  junit?: string;
  json?: boolean;
  host?: string;
}

const SEAMS: readonly CheckedSeam[] = ["link", "host", "job", "channel"];
const DEFAULT_REPEAT = 10;
const MAX_REPEAT = 1000;

function parseSeams(given: readonly string[]): Set<CheckedSeam> {
  const out = new Set<CheckedSeam>();
  for (const s of given) {
    if (!SEAMS.includes(s as CheckedSeam)) {
      throw new UsageError("check.seam", "usage", `--seam '${s}' is not a seam`, {
        hint: `use ${SEAMS.join(" or ")}`,
      });
    }
    out.add(s as CheckedSeam);
  }
  return out;
}

function parseParams(pairs: readonly string[], seams: ReadonlySet<CheckedSeam>) {
  if (pairs.length > 0 && ![...seams].some((s) => s !== "link")) {
    throw new UsageError(
      "check.param",
      "usage",
      "--param is only used by the host, job and channel checks",
      {
        hint: "add the --seam they are for, or drop --param",
      },
    );
  }
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0)
      throw new UsageError("check.param", "usage", `--param '${p}' is not k=v`, {
        hint: "write --param region=eu",
      });
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

function parseRepeat(s: string | undefined): number {
  if (s === undefined) return DEFAULT_REPEAT;
  return bounded(s, {
    name: "--repeat",
    unit: "rounds",
    min: 1,
    max: MAX_REPEAT,
    whole: true,
    example: DEFAULT_REPEAT,
    code: "check.repeat",
  });
}

export async function pluginCheck(io: Io, name: string, opts: CheckOptions): Promise<void> {
  const seams = parseSeams(opts.seam ?? []);
  const params = parseParams(opts.param ?? [], seams);
  const repeat = parseRepeat(opts.repeat);
  const { rec, aim } = await openStore(io.ports).read((db) => ({
    rec: getPlugin(db, name),
    aim: opts.host === undefined ? undefined : aimAt(db, name, opts.host),
  }));
  if (!rec)
    throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${name}'`, {
      hint: `register it first: mu plugin add ${name} -- /abs/path/mu-plugin-${name}`,
    });
  const ctx: RunContext = {
    io,
    reg: { name: rec.name, argv: rec.argv, declaration: rec.declaration },
    canary: `canary-${io.ports.random.hex(16)}`,
    runId: io.ports.random.hex(4),
    logs: [],
    made: nothingMade(),
  };
  if (aim) ctx.linkTarget = aim.target;
  const launcher = subreaperLauncher(io.ports.env);
  // The launcher's reports are the suite's own scratch, gone with the run.
  const reports = "launch" in launcher ? mkdtempSync(join(tmpdir(), "mu-check-")) : undefined;
  if ("launch" in launcher && reports) ctx.launcher = { launch: launcher.launch, reports };
  else if ("why" in launcher) ctx.noLauncher = launcher.why;
  if (!opts.json) io.out(`checking plugin ${name} (${rec.argv.join(" ")})\n`);
  const cleanup = () => {
    if (reports) rmSync(reports, { recursive: true, force: true });
  };
  const forget = terminator.beforeRaise(cleanup);
  let verdicts: Verdict[];
  let cleaned: Cleanup;
  try {
    ({ verdicts, cleanup: cleaned } = await runSuite(
      ctx,
      { seams, params, repeat, ...(aim ? { host: aim } : {}) },
      (v) => {
        if (!opts.json) io.out(`${line(v)}\n`);
      },
    ));
  } finally {
    forget();
    cleanup();
  }
  const failed = verdicts.filter((v) => v.result === "fail");
  if (opts.junit !== undefined)
    await writeJunit(io, resolve(io.ports.cwd, opts.junit), junit(name, verdicts));
  if (opts.json)
    printJson(io, {
      plugin: name,
      ok: failed.length === 0,
      repeat,
      checks: verdicts,
      uncovered: uncovered(verdicts),
      cleanup: cleaned,
    });
  else
    io.out(
      `${[summary(name, verdicts), ...uncovered(verdicts), ...cleanupLines(cleaned)].join("\n")}\n`,
    );
  if (failed.length > 0) {
    throw new RefusedError(
      "check.failed",
      "check",
      `'${name}' failed ${failed.length} of ${verdicts.length} checks (${failed.map((v) => v.id).join(", ")})`,
      { hint: "fix what each FAIL line shows, then run mu plugin check again" },
    );
  }
}

/**
 * --host: a host mu already knows through this plugin. Read only: the suite
 * never creates or changes a profile.
 */
function aimAt(db: Database, plugin: string, host: string): NonNullable<SuiteOptions["host"]> {
  const l = findLinkHost(db, host);
  if (l.reg.name !== plugin)
    throw new UsageError(
      "check.host",
      "usage",
      `host '${host}' is reached through plugin '${l.reg.name}', not '${plugin}'`,
      {
        hint: `name a host of '${plugin}' (see: mu host list), or run mu plugin check ${l.reg.name}`,
      },
    );
  return {
    name: host,
    target: l.target,
    ...(l.profile?.repo ? { root: l.profile.repo } : {}),
  };
}

async function writeJunit(io: Io, path: string, text: string): Promise<void> {
  try {
    const fh = await io.ports.fs.open(path, { mode: 0o644 });
    try {
      await fh.write(Buffer.from(text, "utf8"));
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new UnavailableError(
      "check.junit",
      "check",
      `cannot write the JUnit report to ${path}: ${(err as Error).message}`,
      { hint: "give --junit a path in a directory you can write" },
    );
  }
}
