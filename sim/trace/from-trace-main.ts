#!/usr/bin/env node
import { readFileSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { Document, isMap, isSeq } from "yaml";
import { packageRoot } from "../../host/package-root.js";
import { parseOrUsage } from "../cli-args.js";
import { type Invocation, parseTrace, TraceFormatError } from "./read.js";
import { toScenario } from "./to-scenario.js";

// npm run scenario:from-trace -- <trace files…> [--out scenarios/field/<slug>.yaml]
// Turns the traces mu wrote with MU_TRACE_DIR into a scenario file.

function fail(line: string): never {
  process.stderr.write(`scenario:from-trace: ${line}\n`);
  process.exit(2);
}

function readTrace(f: string): Invocation {
  try {
    return parseTrace(readFileSync(f, "utf8"), f);
  } catch (err) {
    if (err instanceof TraceFormatError) fail(err.message);
    return fail(`cannot read ${f}: ${(err as { code?: string }).code ?? (err as Error).message}`);
  }
}

function main(): void {
  const parsed = parseOrUsage(
    "scenario:from-trace",
    "usage: npm run scenario:from-trace -- <trace files...> [--out scenarios/field/<slug>.yaml]",
    { out: { type: "string" } },
    true,
    {
      out: [
        "FILE",
        "write the scenario there, its id taken from its path under scenarios/ (default: print it on stdout)",
      ],
    },
  );
  const files = parsed.positionals;
  if (files.length === 0) fail("name the trace files (from MU_TRACE_DIR) to convert");
  const out = typeof parsed.values.out === "string" ? resolve(parsed.values.out) : undefined;
  // The runner wants a scenario's id to be its path under scenarios/; a
  // file written elsewhere is named as a field one, never by its path.
  const under = out ? relative(join(packageRoot(), "scenarios"), out) : "";
  const id =
    out && !under.startsWith("..") && !isAbsolute(under)
      ? under.replace(/\.ya?ml$/, "")
      : `field/${basename(out ?? files[0] ?? "trace").replace(/\.(ndjson|ya?ml)$/, "")}`;
  const invs = files.map(readTrace);
  const when = new Date(Math.min(...invs.map((i) => i.at))).toISOString();
  const doc = new Document(toScenario(invs, { id, when }));
  // One line per step and per recorded event keeps the file readable and diffable.
  const flowEach = (node: unknown) => {
    if (isSeq(node)) for (const item of node.items) if (isMap(item)) item.flow = true;
  };
  flowEach(doc.get("steps"));
  const sessions = doc.getIn(["world", "replay", "sessions"]);
  if (isSeq(sessions)) for (const s of sessions.items) if (isMap(s)) flowEach(s.get("events"));
  const text = doc.toString({ lineWidth: 0 });
  if (out) {
    writeFileSync(out, text);
    process.stderr.write(
      `wrote ${relative(process.cwd(), out)}: edit its about, proves and the exit code that should have been\n`,
    );
  } else process.stdout.write(text);
}

main();
