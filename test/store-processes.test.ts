import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { realPorts } from "../host/ports/real.js";
import { openStore, SCHEMA_VERSION } from "../host/store/index.js";

// The store across real mu processes: children run the built JS in dist/
// (test/fixtures/store-*.mjs), SIGKILL is real, and so are the files.

const root = packageRoot();
const fixture = (f: string) => join(root, "test/fixtures", f);

/** Builds dist/ when a source the children import is newer than its output. */
beforeAll(() => {
  const sources = ["host/errors.ts", "host/crash-point.ts", "host/ports/real.ts"].concat(
    ["host/store", "host/ports"].flatMap((d) =>
      readdirSync(join(root, d))
        .filter((f) => f.endsWith(".ts"))
        .map((f) => `${d}/${f}`),
    ),
  );
  const stale = sources.some((s) => {
    const out = join(root, "dist", s.replace(/\.ts$/, ".js"));
    return !existsSync(out) || statSync(out).mtimeMs < statSync(join(root, s)).mtimeMs;
  });
  if (stale) execFileSync("npx", ["tsc", "-p", "tsconfig.json"], { cwd: root, stdio: "inherit" });
});

let dir: string;
let db: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-test-"));
  db = join(dir, "mu.db");
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await new Promise((r) => c.once("exit", r));
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  MU_DB_PATH: db,
  ...extra,
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(script: string, args: string[], extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [fixture(script), ...args], {
    env: env(extra),
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    stderr += s;
  });
  const ended = new Promise<Ended>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const said = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const look = () => {
        if (stdout.includes(`${line}\n`)) resolve();
      };
      child.stdout.on("data", look);
      look();
      void ended.then(() => reject(new Error(`ended before '${line}': ${stderr}`)));
    });
  return { child, ended, said };
}

const writer = (prefix: string, count: number, extra: Record<string, string> = {}) =>
  start("store-writer.mjs", [prefix, String(count)], extra).ended;

const ids = () =>
  openStore(realPorts(env())).read((d) =>
    (d.exec("SELECT id FROM tasks ORDER BY id")[0]?.values ?? []).map((r) => String(r[0])),
  );

describe("crash safety", () => {
  it("SIGKILL between the temp write and the rename keeps the last committed state", async () => {
    expect((await writer("first", 3)).code).toBe(0);
    const before = readFileSync(db);
    const crashed = await writer("second", 1, { MU_CRASH_AT: "store.before-rename" });
    expect(crashed.signal).toBe("SIGKILL");
    // The crash came after the new bytes were fsynced to the temp file.
    expect(readdirSync(dir).filter((f) => f.startsWith("mu.db.tmp-"))).toHaveLength(1);
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(await ids()).toEqual(["first-0", "first-1", "first-2"]);
    // The dead writer's lock is stale: the next writer recovers it.
    expect(existsSync(`${db}.lock`)).toBe(true);
    expect((await writer("after", 1)).code).toBe(0);
    expect(await ids()).toEqual(["after-0", "first-0", "first-1", "first-2"]);
    // ... and removes the temp file the dead writer left.
    expect(readdirSync(dir).filter((f) => f.startsWith("mu.db.tmp-"))).toEqual([]);
  });

  it("MU_CRASH_AT naming another point is inert", async () => {
    expect((await writer("a", 2, { MU_CRASH_AT: "effect.intent-durable" })).code).toBe(0);
    expect(await ids()).toEqual(["a-0", "a-1"]);
  });
});

describe("concurrency", () => {
  it("two processes committing 200 rows each lose none", async () => {
    const [a, b] = await Promise.all([writer("a", 200), writer("b", 200)]);
    expect([a?.code, a?.stderr, b?.code, b?.stderr]).toEqual([0, "", 0, ""]);
    const all = await ids();
    expect(all).toHaveLength(400);
    expect(all.filter((i) => i.startsWith("a-"))).toHaveLength(200);
    expect(all.filter((i) => i.startsWith("b-"))).toHaveLength(200);
    expect(readdirSync(dir).sort()).toEqual(["mu.db", "mu.db.checked"]);
  });

  it("a live holder is waited for: the writer commits once it lets go", async () => {
    const holder = start("store-holder.mjs", []);
    await holder.said("held");
    const w = start("store-writer.mjs", ["w", "1"], { MU_LOCK_TIMEOUT_MS: "120000" });
    await w.said("started");
    // Not a timing claim: whenever we look while the lock is held, w has not committed.
    await new Promise((r) => setTimeout(r, 300));
    expect(await ids()).toEqual([]);
    expect(w.child.exitCode).toBeNull();
    holder.child.stdin?.end();
    expect((await holder.ended).code).toBe(0);
    expect((await w.ended).code).toBe(0);
    expect(await ids()).toEqual(["w-0"]);
  });

  it("a live holder makes a writer fail with exit 5 under a short MU_LOCK_TIMEOUT_MS", async () => {
    expect((await writer("a", 1)).code).toBe(0);
    const before = readFileSync(db);
    const holder = start("store-holder.mjs", []);
    await holder.said("held");
    const w = await writer("b", 1, { MU_LOCK_TIMEOUT_MS: "300" });
    expect(w.code).toBe(5);
    expect(w.stderr).toBe(
      `mu: store: the database lock ${db}.lock is held by pid ${holder.child.pid} (waited 300 ms); let that mu finish and retry, or raise MU_LOCK_TIMEOUT_MS\n`,
    );
    expect(readFileSync(db).equals(before)).toBe(true);
    // SIGKILLed, the holder leaves its lock; the next writer recovers it.
    holder.child.kill("SIGKILL");
    await holder.ended;
    expect(existsSync(`${db}.lock`)).toBe(true);
    expect((await writer("c", 1)).code).toBe(0);
    expect(await ids()).toEqual(["a-0", "c-0"]);
  });

  it("recovers a stale lock naming a dead pid, or a live pid with another start time", async () => {
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: 999_999_999, start: "1" }));
    expect((await writer("a", 1)).code).toBe(0);
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: process.pid, start: "0" }));
    expect((await writer("b", 1)).code).toBe(0);
    expect(await ids()).toEqual(["a-0", "b-0"]);
  });
});

describe("refusals leave the file byte-identical", () => {
  const harms: [string, (b: Buffer) => void][] = [
    ["truncated to half", (b) => truncateSync(db, b.length / 2)],
    ["truncated off a page boundary", (b) => truncateSync(db, b.length - 1000)],
    ["garbage", (b) => writeFileSync(db, Buffer.alloc(b.length, 0x5a))],
  ];
  it.each(harms)("%s: exit 5, one line", async (_what, harm) => {
    expect((await writer("a", 30)).code).toBe(0);
    harm(readFileSync(db));
    const damaged = readFileSync(db);
    const w = await writer("b", 1);
    expect(w.code).toBe(5);
    expect(w.stderr).toMatch(
      new RegExp(
        `^mu: store: ${db} is not a valid mu database \\(truncated or corrupt: [^\\n]+\\n$`,
      ),
    );
    expect(readFileSync(db).equals(damaged)).toBe(true);
  });

  it("a DB from a newer mu: exit 5, one line", async () => {
    expect((await writer("a", 1)).code).toBe(0);
    await openStore(realPorts(env())).write((d) => d.run("PRAGMA user_version = 99"));
    const bytes = readFileSync(db);
    const w = await writer("b", 1);
    expect(w.code).toBe(5);
    expect(w.stderr).toBe(
      `mu: store: database ${db} was written by a newer mu (schema 99, this mu knows ${SCHEMA_VERSION}); upgrade mu; it never migrates a database backwards\n`,
    );
    expect(readFileSync(db).equals(bytes)).toBe(true);
  });
});

describe("location", () => {
  it("a process without MU_DB_PATH uses MU_STATE_DIR, then HOME", async () => {
    const home = join(dir, "home");
    const state = join(dir, "state");
    const bare = { PATH: process.env.PATH ?? "", HOME: home };
    const run = (e: Record<string, string>) =>
      new Promise<number | null>((resolve) =>
        spawn(process.execPath, [fixture("store-writer.mjs"), "x", "1"], { env: e }).once(
          "exit",
          resolve,
        ),
      );
    expect(await run({ ...bare, MU_STATE_DIR: state })).toBe(0);
    expect(existsSync(join(state, "mu.db"))).toBe(true);
    expect(existsSync(home)).toBe(false);
    expect(await run(bare)).toBe(0);
    const stateDir = join(home, ".local/state/mu");
    expect(existsSync(join(stateDir, "mu.db"))).toBe(true);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
  });
});
