// The baseline: a child that sends each line straight back, no JSON at all.
process.stdin.pipe(process.stdout);
