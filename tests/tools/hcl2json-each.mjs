#!/usr/bin/env node
// Parses every .tf file of one directory with HashiCorp's HCL parser (as hcl2json.mjs does) and
// prints {"<file>": {"ok": <parsed>}} or {"<file>": {"error": "<message>"}} for each: a file that
// does not parse is a result here, not a failure, so property tests can compare many inputs in
// one run of the parser. Install the parser first: npm ci --prefix tests/tools
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@cdktf/hcl2json";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node hcl2json-each.mjs <dir>");
  process.exit(2);
}
const out = {};
for (const file of readdirSync(dir).filter((f) => f.endsWith(".tf")).sort()) {
  const text = readFileSync(join(dir, file), "utf8");
  try {
    out[file] = { ok: await parse(file, text) };
  } catch (err) {
    out[file] = { error: String(err?.message ?? err) };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
