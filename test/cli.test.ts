import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { sqlJs } from "../host/store/sqljs.js";
import { mu, muBin, muProcess, tempState } from "./helpers.js";

const version = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")).version;
let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

describe("the built mu binary", () => {
  it("prints the package version", () => {
    const r = muProcess(["--version"], state.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
    expect(muProcess(["-V"], state.env).stdout).toBe(`${version}\n`);
  });

  // --version skips commander for speed; a closed stdout must
  // still be the one line docs/cli.md documents and exit 5, never a stack trace.
  it("--version into a closed stdout is one line and exit 5", async () => {
    const child = spawn(process.execPath, [muBin, "--version"], {
      env: { PATH: process.env.PATH ?? "", ...state.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    const code = await new Promise((r) => child.on("close", r));
    expect(stderr).toMatch(/^mu: output: stdout was closed before [^\n]*\(EPIPE\)[^\n]*\n$/);
    expect(code).toBe(5);
  });

  it("lists every namespace in --help", () => {
    const r = muProcess(["--help"], state.env);
    expect(r.code).toBe(0);
    for (const ns of ["plugin", "host", "agent", "task", "wait", "state"]) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${ns}\\b`, "m"));
    }
  });

  it("maps a store it cannot write to one line and exit 5", () => {
    // A regular file where the DB's directory should be.
    const blocker = join(state.dir, "blocker");
    writeFileSync(blocker, "");
    const r = muProcess(["task", "add", "t1"], {
      ...state.env,
      MU_DB_PATH: join(blocker, "mu.db"),
    });
    expect(r.stderr).toMatch(/^mu: store: cannot write .*blocker\/mu\.db \([A-Z]+\); [^\n]+\n$/);
    expect(r.code).toBe(5);
  });
});

describe("usage errors", () => {
  it.each([
    [
      ["plugin", "list", "--bogus"],
      /^mu: usage: unknown option '--bogus'; usage: mu plugin list \[options\]\n$/,
    ],
    [["task", "add"], /^mu: usage: missing required argument 'id'; usage: mu task add [^\n]*\n$/],
    [["task", "add", "a", "b"], /^mu: usage: too many arguments[^\n]*\n$/],
    [["nope"], /^mu: usage: unknown command 'nope'[^\n]*\n$/],
    [
      ["plugin"],
      /^mu: usage: 'mu plugin' needs a verb; its verbs: add, rm, list, schema, check[^\n]*\n$/,
    ],
    [["host", "spawn"], /^mu: usage: 'mu host' has no verb 'spawn'; its verbs: add, [^\n]*\n$/],
    [
      ["agent", "spawn", "a"],
      /^mu: usage: required option '--host <host>' not specified; [^\n]*\n$/,
    ],
  ])("%j exits 2 with one line: the error and the usage", async (args, pattern) => {
    const r = await mu(args, state.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(pattern);
    expect(r.stdout).toBe("");
  });

  it("host add without --plugin gets mu's own line, naming the fix (exit 2)", async () => {
    const r = await mu(["host", "add", "box"], state.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "mu: usage: a host needs --plugin: this mu adds hosts on a plugin link only; use: mu host add box --plugin <plugin> (mu plugin list shows them)\n",
    );
    expect(r.stdout).toBe("");
  });

  it("host add --help lists no flag mu refuses for a plugin host", async () => {
    const r = await mu(["host", "add", "--help"], state.env);
    expect(r.stdout).toMatch(/--plugin/);
    expect(r.stdout).not.toMatch(/--shell|--exec/);
    const refused = await mu(["host", "add", "box", "--plugin", "p", "--shell", "x"], state.env);
    expect(refused.stderr).toMatch(/^mu: usage: a --plugin host takes no --shell/);
  });

  it("help and version are successes, not usage errors", async () => {
    expect((await mu(["plugin", "--help"], state.env)).code).toBe(0);
    expect((await mu(["-V"], state.env)).code).toBe(0);
  });
});

describe("tasks (the first write verb)", () => {
  it("adds, refuses a duplicate with exit 4, and lists as JSON", async () => {
    expect((await mu(["task", "add", "t1"], state.env)).code).toBe(0);
    const dup = await mu(["task", "add", "t1"], state.env);
    expect(dup.code).toBe(4);
    expect(dup.stderr).toBe(
      "mu: task: task 't1' already exists; pick another id, or see: mu task list\n",
    );
    const list = await mu(["task", "list", "--json"], state.env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      { id: "t1", state: "open", claimedBy: null, createdAt: expect.any(Number) },
    ]);
  });

  it("refuses a bad id before touching the DB", async () => {
    const r = await mu(["task", "add", "../x"], state.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mu: usage: task id '..\/x' is not valid; /);
  });

  it("plugin list on an empty state says how to add one", async () => {
    const r = await mu(["plugin", "list"], state.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no plugins registered/);
    expect(JSON.parse((await mu(["plugin", "list", "--json"], state.env)).stdout)).toEqual([]);
  });
});

describe("numbers a person types", () => {
  it.each([
    [
      ["host", "exec", "box", "--timeout-ms", "99999999999", "--", "true"],
      /--timeout-ms '99999999999'/,
    ],
    [
      ["host", "exec", "box", "--timeout-ms", "1.5", "--", "true"],
      /milliseconds from 1 to 86400000/,
    ],
    // The old spelling is checked the same way, under the name typed.
    [["host", "exec", "box", "--timeout", "1.5", "--", "true"], /--timeout '1\.5'.*milliseconds/],
    [["host", "exec", "box", "--timeout", "5", "--timeout-ms", "5", "--", "true"], /both given/],
    [["host", "fetch", "box", "--timeout-ms", "0"], /--timeout-ms '0'/],
    [["host", "push", "box", "--timeout-ms", "-3"], /--timeout-ms '-3'/],
    [["wait", "a", "--timeout", "99999999999"], /seconds from 0\.001 to 86400\b/],
    [["wait", "a", "--timeout", "soon"], /--timeout 'soon'/],
    [["host", "add", "box", "--plugin", "p", "--max-sessions", "100000"], /--max-sessions/],
    // Plain decimal digits only: what Number() would also read is refused.
    [
      ["host", "exec", "box", "--timeout-ms", "0x10", "--", "true"],
      /--timeout-ms '0x10'.*plain digits/,
    ],
    [["host", "exec", "box", "--timeout-ms", "1e3", "--", "true"], /--timeout-ms '1e3'/],
    [["host", "fetch", "box", "--timeout-ms", " 5"], /--timeout-ms ' 5'/],
    [["host", "push", "box", "--timeout-ms", "+5"], /--timeout-ms '\+5'/],
    [["host", "exec", "box", "--timeout-ms", "007", "--", "true"], /--timeout-ms '007'/],
    [["wait", "a", "--timeout", "1e3"], /--timeout '1e3'.*a \. before any fraction/],
    [["wait", "a", "--timeout", ".5"], /--timeout '\.5'/],
    [["host", "add", "box", "--plugin", "p", "--max-sessions", "010"], /--max-sessions '010'/],
  ])("%j is one usage line with the unit and range (exit 2)", (args, pattern) => {
    // A real process: Node's TimeoutOverflowWarning would show on its stderr.
    const r = muProcess(args, state.env);
    expect(r.stderr).toMatch(/^mu: usage: [^\n]+\n$/);
    expect(r.stderr).toMatch(pattern);
    expect(r.code).toBe(2);
  });

  it("checks mu's millisecond variables the same way", async () => {
    for (const bad of ["abc", "1e12", "-1", "2.5"]) {
      const r = await mu(["task", "add", "t1"], { ...state.env, MU_LOCK_TIMEOUT_MS: bad });
      expect(r.stderr).toMatch(
        /^mu: usage: MU_LOCK_TIMEOUT_MS='[^']*' is not valid; give a whole number of milliseconds from 0 to 86400000/,
      );
      expect(r.code).toBe(2);
    }
  });

  it("refuses a bad MU_*_MS in the real binary even on a verb that never reads it", () => {
    // task list never reads the spawn's or the wait's timings: the check is up front.
    for (const [name, bad] of [
      ["MU_SPAWN_JOB_MS", "0x10"],
      ["MU_WAIT_LIVENESS_MS", "1e3"],
      ["MU_VIEW_READY_MS", "+5"],
    ]) {
      const r = muProcess(["task", "list"], { ...state.env, [name as string]: bad as string });
      expect(r.stderr).toMatch(
        new RegExp(
          `^mu: usage: ${name}='[^']*' is not valid; give a whole number of milliseconds from 0 to 86400000, in plain digits, [^\n]*\n$`,
        ),
      );
      expect(r.code).toBe(2);
    }
    expect(readdirSync(state.dir)).toEqual([]);
  });

  it("checks the testbed's signed MU_CLOCK_OFFSET_MS too, in one line from the real binary", () => {
    const r = muProcess(["task", "list"], { ...state.env, MU_CLOCK_OFFSET_MS: "soon" });
    expect(r.stderr).toMatch(/^mu: usage: MU_CLOCK_OFFSET_MS='soon' is not valid; [^\n]+\n$/);
    expect(r.code).toBe(2);
    const back = muProcess(["task", "list"], { ...state.env, MU_CLOCK_OFFSET_MS: "-5000" });
    expect(back.code).toBe(0);
  });

  it("says the unit of every timeout in --help", async () => {
    for (const [verb, flag, unit] of [
      [["host", "exec"], "timeout-ms", "milliseconds"],
      [["host", "fetch"], "timeout-ms", "milliseconds"],
      [["host", "push"], "timeout-ms", "milliseconds"],
      [["wait"], "timeout", "seconds"],
    ] as const) {
      const r = await mu([...verb, "--help"], state.env);
      expect(r.stdout).toMatch(new RegExp(`--${flag} <\\w+>\\s+[^\\n]*\\b${unit}\\b`));
    }
  });
});

describe("host names", () => {
  it.each([[""], ["a b"], ["a/b"], ["../../x"], ["x".repeat(300)], ["a\nb"], [".hidden"]])(
    "%j is refused by host add and host acquire, in one line, before the DB (exit 2)",
    async (name) => {
      for (const args of [
        ["host", "add", name, "--plugin", "p"],
        ["host", "acquire", name, "--provider", "p"],
      ]) {
        const r = await mu(args, state.env);
        expect(r.stderr).toMatch(/^mu: usage: host name '[^\n]*' is not valid; use 1-64 [^\n]*\n$/);
        expect(r.code).toBe(2);
      }
      expect(readdirSync(state.dir)).toEqual([]);
    },
  );
});

describe("a database that is not mu's", () => {
  it.each([
    ["version 0 with another program's table", 0],
    ["a later version without mu's tables", 7],
  ])("%s is refused (exit 5, one line) and left byte-identical", async (_what, version) => {
    const SQL = await sqlJs();
    const other = new SQL.Database();
    other.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
      INSERT INTO notes (body) VALUES ('keep me'); PRAGMA user_version = ${version};`);
    const path = join(state.dir, "other.db");
    writeFileSync(path, other.export());
    other.close();
    const before = readFileSync(path);
    for (const args of [
      ["task", "add", "t1"],
      ["task", "list"],
      ["plugin", "list", "--json"],
    ]) {
      const r = muProcess(args, { ...state.env, MU_DB_PATH: path });
      expect(r.stderr).toMatch(
        /^mu: store: [^\n]*other\.db is an SQLite database, but not mu's [^\n]*\n$/,
      );
      expect(r.code).toBe(5);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("mu plugin schema", () => {
  it("prints the schema file's path and the sha256 of its exact bytes, without a DB", async () => {
    const file = join(packageRoot(), "schemas/plugin-protocol-v1.json");
    const want = `sha256:${createHash("sha256").update(readFileSync(file)).digest("hex")}`;
    const r = await mu(["plugin", "schema"], state.env);
    expect(r.stdout).toBe(`${file}\n${want}\n`);
    expect((await mu(["plugin", "schema", "--digest"], state.env)).stdout).toBe(`${want}\n`);
    const j = JSON.parse((await mu(["plugin", "schema", "--json"], state.env)).stdout);
    expect(j).toEqual({ path: file, digest: want });
    expect(readdirSync(state.dir)).toEqual([]);
  });
});
