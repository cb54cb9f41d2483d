#!/usr/bin/env node
// Parses every .tf (and .tfvars) file of a directory with HashiCorp's HCL parser (hcl2json, compiled to WASM in
// @cdktf/hcl2json) and prints {"<file>": <parsed>} as JSON. With several directories it prints
// {"<dir>": {"<file>": <parsed>}} (the parser loads once, which is most of the time taken). Exits non-zero naming
// the file that does not parse. Install the parser first: npm ci --prefix tests/tools
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@cdktf/hcl2json";

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: node hcl2json.mjs <dir>...");
  process.exit(2);
}

async function parseDir(dir) {
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
  return out;
}

let out;
if (dirs.length === 1) {
  out = await parseDir(dirs[0]);
} else {
  out = {};
  for (const dir of dirs) {
    out[dir] = await parseDir(dir);
  }
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
