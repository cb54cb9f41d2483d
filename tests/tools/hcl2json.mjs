#!/usr/bin/env node
// Parses every .tf (and .tfvars) file of a directory with HashiCorp's HCL parser (hcl2json, compiled to WASM in
// @cdktf/hcl2json) and prints {"<file>": <parsed>} as JSON. Exits non-zero naming the file that
// does not parse. Install the parser first: npm ci --prefix tests/tools
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@cdktf/hcl2json";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node hcl2json.mjs <dir>");
  process.exit(2);
}
const files = readdirSync(dir).filter((f) => f.endsWith(".tf") || f.endsWith(".tfvars")).sort();
const out = {};
for (const file of files) {
  const text = readFileSync(join(dir, file), "utf8");
  try {
    out[file] = await parse(file, text);
  } catch (err) {
    console.error(`${join(dir, file)}: HCL parse error: ${err?.message ?? err}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
