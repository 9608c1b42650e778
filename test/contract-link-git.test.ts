import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { linkFetch, linkPush } from "../host/contract/link-git.js";
import type { Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import type { LinkSeam } from "../host/protocol/declaration.js";
import { type Exec, failure, sh } from "./fake-provider.js";

// link.push and link.fetch read back, in-process against a link plugin whose
// "remote" is a temp login directory on this machine: link.exec is the real
// shell there, and push and fetch are real git, so the check's repositories,
// commits and FETCH_HEAD are real. Each broken case replaces one answer; the
// same breaks as plugins on the wire (push-once, stale-fetch,
// fetch-first-branch) are in test/contract-fixtures.test.ts.

const PLACE = { target: { host: { name: CHECK_HOST } }, label: "on box" };
const WITH_FETCH = { fetch: true } as LinkSeam;
const NO_FETCH = { fetch: false } as LinkSeam;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const git = (dir: string, ...args: string[]): Exec => {
  const r = spawnSync(
    "git",
    ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@invalid", ...args],
    { encoding: "utf8" },
  );
  return { exitCode: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
};

type Params = Record<string, unknown>;

interface Hooks {
  /** Replaces the n-th link.push (from 1); `real` does what a correct plugin does. */
  push?: (n: number, p: Params, real: () => Exec) => Exec;
  /** Replaces the n-th link.fetch. */
  fetch?: (n: number, p: Params, real: () => Exec) => Exec;
  exec?: (script: string, real: () => Exec) => Exec;
}

function plugin(hooks: Hooks = {}) {
  const home = mkdtempSync(join(tmpdir(), "mu-link-git-"));
  dirs.push(home);
  const calls: { method: string; params: Params }[] = [];
  const at = (p: unknown) => (isAbsolute(`${p}`) ? `${p}` : join(home, `${p}`));
  let pushes = 0;
  let fetches = 0;
  const s = {
    call: async (method: string, params: Params) => {
      calls.push({ method, params });
      if (method === "link.exec") {
        const real = () => sh(params.script as string, home);
        return hooks.exec ? hooks.exec(params.script as string, real) : real();
      }
      if (method === "link.push") {
        const remote = at(params.remoteRepo);
        const real = () => {
          if (!existsSync(remote)) spawnSync("git", ["init", "--quiet", remote]);
          return git(
            `${params.localRepo}`,
            "push",
            "--quiet",
            remote,
            `${params.rev}:refs/heads/mu-pushed`,
          );
        };
        return hooks.push ? hooks.push(++pushes, params, real) : real();
      }
      if (method === "link.fetch") {
        const real = () =>
          git(`${params.localRepo}`, "fetch", "--quiet", at(params.remoteCwd), "HEAD");
        return hooks.fetch ? hooks.fetch(++fetches, params, real) : real();
      }
      throw new Error(`unknown ${method}`);
    },
  } as unknown as Session;
  return { s, home, calls, at };
}

const ok: Exec = { exitCode: 0, stdout: "", stderr: "" };
const scratchGone = (home: string) => expect(readdirSync(home)).toEqual([]);

describe("link.push, read back", () => {
  it("passes a push that lands, repeats and moves on, and a fetch that brings it back; removes what it made", async () => {
    const p = plugin();
    const out = await linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1");
    expect(out.detail).toBe(
      "on box: the remote holds the pushed commit, a second push succeeded, a newer commit pushed to it arrived, and a fetch brought it back",
    );
    const pushes = p.calls.filter((c) => c.method === "link.push");
    expect(pushes).toHaveLength(3);
    const remote = join(p.home, ".mu-check-r1-p/pushed");
    expect(pushes[0].params).toEqual({
      target: PLACE.target,
      localRepo: pushes[0].params.localRepo,
      remoteRepo: remote,
      rev: pushes[0].params.rev,
      timeoutMs: 60_000,
    });
    expect(pushes[1].params).toEqual(pushes[0].params);
    expect(pushes[2].params.rev).not.toBe(pushes[0].params.rev);
    expect(pushes[2].params.localRepo).toBe(pushes[0].params.localRepo);
    const fetch = p.calls.find((c) => c.method === "link.fetch");
    expect(fetch?.params).toMatchObject({
      target: PLACE.target,
      remoteCwd: remote,
      timeoutMs: 60_000,
    });
    expect(existsSync(`${pushes[0].params.localRepo}`)).toBe(false);
    expect(existsSync(`${fetch?.params.localRepo}`)).toBe(false);
    scratchGone(p.home);
  });

  it("without fetch declared, says it did not fetch back, and sends none", async () => {
    const p = plugin();
    const out = await linkPush(p.s, PLACE, NO_FETCH, "r1-p", "n1");
    expect(out.detail).toBe(
      "on box: the remote holds the pushed commit, a second push succeeded, and a newer commit pushed to it arrived; not fetched back (fetch: false)",
    );
    expect(p.calls.some((c) => c.method === "link.fetch")).toBe(false);
  });

  it("fails a first push that answers an exit code", async () => {
    const p = plugin({ push: () => ({ exitCode: 1, stdout: "", stderr: "denied" }) });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    expect(f.detail).toBe("link.push of a fresh commit to a fresh path answered exitCode 1");
    expect(f.evidence).toEqual(['{"exitCode":1,"stderr":"denied","stdout":""}']);
    scratchGone(p.home);
  });

  it("fails a push that answers an error, with the plugin's words", async () => {
    const p = plugin({
      push: () => {
        throw new ErrorReply("link.push", "permanent", "no such host");
      },
    });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    expect(f.detail).toBe("link.push answered an error (permanent): no such host");
    expect(f.evidence).toEqual(["link.push answered an error (permanent): no such host"]);
  });

  it("fails a push that answers 0 yet left nothing on the remote", async () => {
    const p = plugin({ push: () => ok });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    const rev = p.calls.find((c) => c.method === "link.push")?.params.rev;
    expect(f.detail).toBe(
      `link.push answered exitCode 0, yet the remote repository does not hold ${rev}`,
    );
    expect(f.evidence).toHaveLength(1);
  });

  it("fails a second push of a commit the remote holds that answers an exit code", async () => {
    const p = plugin({ push: (n, _p, real) => (n === 2 ? { ...ok, exitCode: 1 } : real()) });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    expect(f.detail).toBe(
      "a second link.push of a commit the remote already holds answered exitCode 1",
    );
    expect(f.evidence).toEqual(['{"exitCode":1,"stderr":"","stdout":""}']);
  });

  it("fails a push to an existing repository that answers 0 and brings nothing", async () => {
    const p = plugin({ push: (n, _p, real) => (n === 3 ? ok : real()) });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    const next = p.calls.filter((c) => c.method === "link.push")[2].params.rev;
    expect(f.detail).toBe(
      `link.push of a second, newer commit to the existing repository answered exitCode 0, yet the remote does not hold ${next}`,
    );
    expect(f.evidence).toHaveLength(2);
    expect(f.evidence[0]).toBe('{"exitCode":0,"stderr":"","stdout":""}');
  });

  it("fails a push to an existing repository that answers an exit code, though it landed", async () => {
    const p = plugin({
      push: (n, _p, real) => (n === 3 ? { ...real(), exitCode: 1 } : real()),
    });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    expect(f.detail).toBe(
      "link.push of a second, newer commit to the existing repository answered exitCode 1",
    );
  });

  it("fails when git there cannot point the pushed repository's HEAD at the commit", async () => {
    const p = plugin({
      exec: (script, real) => (script.includes("update-ref") ? { ...ok, exitCode: 128 } : real()),
    });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    expect(f.detail).toBe("git could not point the pushed repository's HEAD at the commit");
    expect(f.evidence).toEqual(['{"exitCode":128,"stderr":"","stdout":""}']);
  });

  it("fails a fetch of the pushed repository that brings back another commit", async () => {
    const p = plugin({
      fetch: (_n, params, real) => {
        real();
        const first = p.calls.find((c) => c.method === "link.push")?.params.rev;
        git(`${params.localRepo}`, "fetch", "--quiet", p.at(params.remoteCwd), `${first}`);
        return ok;
      },
    });
    const f = await failure(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1"));
    const revs = p.calls.filter((c) => c.method === "link.push").map((c) => c.params.rev);
    expect(f.detail).toBe(
      `after link.fetch of the pushed repository, FETCH_HEAD names ${revs[0]}, not ${revs[2]}`,
    );
    expect(f.evidence).toEqual(['{"exitCode":0,"stderr":"","stdout":""}']);
  });
});

describe("link.fetch, read back", () => {
  it("passes a fetch that follows HEAD through a new commit and onto another branch", async () => {
    const p = plugin();
    const out = await linkFetch(p.s, PLACE, "r1-f", "n1");
    expect(out.detail).toBe(
      "on box: FETCH_HEAD names the HEAD of a fresh repository, again after a new commit, and with HEAD on another branch",
    );
    const fetches = p.calls.filter((c) => c.method === "link.fetch");
    expect(fetches).toHaveLength(3);
    expect(fetches[0].params).toEqual({
      target: PLACE.target,
      remoteCwd: join(p.home, ".mu-check-r1-f/fetched"),
      localRepo: fetches[0].params.localRepo,
      timeoutMs: 60_000,
    });
    // each fetch goes into a fresh local repository, removed after
    expect(new Set(fetches.map((c) => c.params.localRepo)).size).toBe(3);
    for (const c of fetches) expect(existsSync(`${c.params.localRepo}`)).toBe(false);
    scratchGone(p.home);
  });

  it("reads the profile's repository first, and never writes it", async () => {
    const p = plugin();
    const repo = join(p.home, "proj");
    spawnSync("git", ["init", "--quiet", repo]);
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "seed");
    const head = git(repo, "rev-parse", "HEAD").stdout.trim();
    const out = await linkFetch(p.s, { ...PLACE, root: "proj" }, "r1-f", "n1");
    expect(out.detail).toBe(
      "on box: FETCH_HEAD names the HEAD of the profile's repository proj, and of a fresh repository, again after a new commit, and with HEAD on another branch",
    );
    expect(p.calls.find((c) => c.method === "link.fetch")?.params.remoteCwd).toBe("proj");
    expect(git(repo, "rev-parse", "HEAD").stdout.trim()).toBe(head);
    expect(git(repo, "branch", "--list").stdout.trim().split("\n")).toHaveLength(1);
  });

  it("fails a profile whose repository is not there, saying how to put it there", async () => {
    const p = plugin();
    const f = await failure(
      linkFetch(
        p.s,
        { target: { host: { name: "box" } }, label: "on box", root: "proj" },
        "r1-f",
        "n1",
      ),
    );
    expect(f.detail).toBe(
      "the HEAD of the profile's repository proj on the host could not be read; if it does not exist yet, run mu host push box first",
    );
    expect(f.evidence).toHaveLength(1);
  });

  it("fails a fetch that serves the first HEAD again after a new commit", async () => {
    let first = "";
    const p = plugin({
      fetch: (n, params, real) => {
        if (n === 1) {
          const r = real();
          first = git(`${params.localRepo}`, "rev-parse", "FETCH_HEAD").stdout.trim();
          return r;
        }
        git(`${params.localRepo}`, "fetch", "--quiet", p.at(params.remoteCwd), first);
        return ok;
      },
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toMatch(
      new RegExp(
        `^after link\\.fetch of the same repository after a new commit, FETCH_HEAD names ${first}, not [0-9a-f]{40}$`,
      ),
    );
  });

  it("fails a fetch of the first branch by name once HEAD is on another", async () => {
    const p = plugin({
      fetch: (_n, params) => {
        const remote = p.at(params.remoteCwd);
        const first = git(
          remote,
          "for-each-ref",
          "--format=%(refname)",
          "refs/heads/",
        ).stdout.split("\n")[0];
        return git(`${params.localRepo}`, "fetch", "--quiet", remote, first);
      },
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toMatch(
      /^after link\.fetch of the same repository with HEAD on another branch, FETCH_HEAD names [0-9a-f]{40}, not [0-9a-f]{40}$/,
    );
  });

  it("fails a fetch that answers an exit code", async () => {
    const p = plugin({ fetch: () => ({ exitCode: 128, stdout: "", stderr: "fatal" }) });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toBe("link.fetch of a fresh repository answered exitCode 128");
    expect(f.evidence).toEqual(['{"exitCode":128,"stderr":"fatal","stdout":""}']);
    scratchGone(p.home);
  });

  it("fails a fetch that answers 0 and leaves no FETCH_HEAD", async () => {
    const p = plugin({ fetch: () => ok });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toBe(
      "link.fetch of a fresh repository answered exitCode 0 but left no FETCH_HEAD in the local repository",
    );
    expect(f.evidence).toEqual(['{"exitCode":0,"stderr":"","stdout":""}']);
  });

  it("fails where git there cannot make the repository to fetch from", async () => {
    const p = plugin({
      exec: (script, real) => (script.startsWith("git init") ? { ...ok, exitCode: 127 } : real()),
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toBe("git could not make a repository on the host to fetch from");
    expect(f.evidence).toEqual(['{"exitCode":127,"stderr":"","stdout":""}']);
  });

  it("fails where git there cannot make the new commit", async () => {
    const p = plugin({
      exec: (script, real) => (script.includes("checkout") ? { ...ok, exitCode: 1 } : real()),
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toBe("git could not make a new commit on the host to fetch");
    expect(p.calls.filter((c) => c.method === "link.fetch")).toHaveLength(2);
  });

  it("fails a HEAD that cannot be read as a commit", async () => {
    const p = plugin({
      exec: (script, real) =>
        script.includes("rev-parse --verify --quiet HEAD") ? { ...ok, stdout: "main\n" } : real(),
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.detail).toBe("the HEAD of a fresh repository on the host could not be read");
  });

  it("fails a HEAD read that exits non-zero, or names more than a commit", async () => {
    const hash = "0".repeat(40);
    for (const answer of [
      { exitCode: 1, stdout: `${hash}\n`, stderr: "" },
      { exitCode: 0, stdout: `${hash}-dirty\n`, stderr: "" },
      { exitCode: 0, stdout: `x${hash}\n`, stderr: "" },
    ]) {
      const p = plugin({
        exec: (script, real) =>
          script.includes("rev-parse --verify --quiet HEAD") ? answer : real(),
      });
      const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
      expect(f.detail).toBe("the HEAD of a fresh repository on the host could not be read");
    }
  });

  it("a failed new commit on the host shows the script's result", async () => {
    const p = plugin({
      exec: (script, real) =>
        script.includes("checkout") ? { ...ok, exitCode: 1, stderr: "no" } : real(),
    });
    const f = await failure(linkFetch(p.s, PLACE, "r1-f", "n1"));
    expect(f.evidence).toEqual(['{"exitCode":1,"stderr":"no","stdout":""}']);
  });
});

describe("the check's local repositories", () => {
  /** Runs fn with TMPDIR and the git environment set as given, restored after. */
  async function withEnv(env: Record<string, string>, fn: () => Promise<void>) {
    const was = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      await fn();
    } finally {
      for (const [k, v] of Object.entries(was)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it("are made in the temp directory under the check's name, and gone once it answered", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "mu-link-git-tmp-"));
    dirs.push(tmp);
    const p = plugin();
    await withEnv({ TMPDIR: tmp }, async () => {
      await linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1");
    });
    const local = [
      ...p.calls
        .filter((c) => c.method === "link.push" || c.method === "link.fetch")
        .map((c) => `${c.params.localRepo}`),
    ];
    for (const l of local) expect(l.startsWith(join(tmp, "mu-check-"))).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("commit even where the user's git config signs every commit", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "mu-link-git-cfg-"));
    dirs.push(tmp);
    const cfg = join(tmp, "gitconfig");
    writeFileSync(cfg, "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n");
    const p = plugin();
    await withEnv({ GIT_CONFIG_GLOBAL: cfg }, async () => {
      const out = await linkPush(p.s, PLACE, NO_FETCH, "r1-p", "n1");
      expect(out.result).toBe("pass");
    });
  });

  it("a commit git refuses ends the check with git's own failure, and leaves no directory", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "mu-link-git-tmp-"));
    dirs.push(tmp);
    const p = plugin();
    await withEnv({ TMPDIR: tmp, GIT_AUTHOR_DATE: "not a date" }, async () => {
      await expect(linkPush(p.s, PLACE, WITH_FETCH, "r1-p", "n1")).rejects.toThrow(
        "git could not make a local commit for the check (is git installed?)",
      );
    });
    expect(readdirSync(tmp)).toEqual([]);
    expect(p.calls).toEqual([]);
  });
});
