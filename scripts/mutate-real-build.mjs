#!/usr/bin/env node
// The build step of stryker.real.config.mjs, run inside Stryker's sandbox.
// Stryker links node_modules into the sandbox only after its build command,
// and tsc lives there; so the link is made here first (the sandbox sits two
// levels under the project: .stryker-tmp/sandbox-XXXX), then the usual build.
import { spawnSync } from "node:child_process";
import { existsSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";

const here = process.cwd();
if (!existsSync(join(here, "node_modules"))) symlinkSync(resolve(here, "../../node_modules"), join(here, "node_modules"));
const r = spawnSync(process.execPath, [join(here, "scripts", "build.mjs")], { stdio: "inherit" });
process.exit(r.status ?? 1);
