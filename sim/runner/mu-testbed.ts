// The testbed's build of mu: tsc's files, which hold the planted bugs that
// the bundle users run leaves out (host/testbed-plant.ts). The real engine
// runs a step with this when its environment names a plant, so a scenario
// the explorer found with one fails on real processes too.
import { runVerb } from "../../host/cli/run-verb.js";
import { classify } from "../../host/errors.js";

try {
  await runVerb(process.argv.slice(2));
} catch (err) {
  // As the bin does: runVerb reports its own errors; this is a broken install.
  const { exit, line } = classify(err);
  process.stderr.write(`${line}\n`);
  process.exitCode = exit;
}
