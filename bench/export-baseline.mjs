/**
 * The export baseline: only the unavoidable work. Read the JSONL, JSON.parse each line, and
 * write the same set of files with the same byte sizes that export wrote (from a manifest),
 * spread over the rows in order. Uses the cheapest write strategy available (synchronous
 * writes, each directory created once), so the ratio charges export only for its own work.
 *   node export-baseline.mjs <input.jsonl> <manifest.json> <outdir>
 */
import { createReadStream, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';

const [input, manifestPath, out] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
const made = new Set();
const perRow = manifest.files.length / manifest.rows;
let next = 0;
let row = 0;
const payload = Buffer.alloc(
  manifest.files.reduce((m, f) => Math.max(m, f[1]), 1),
  120,
);

function writeUpTo(limit) {
  for (; next < limit && next < manifest.files.length; next++) {
    const [rel, size] = manifest.files[next];
    const full = join(out, rel);
    const dir = dirname(full);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    writeFileSync(full, payload.subarray(0, size));
  }
}

for await (const line of createInterface({ input: createReadStream(input), crlfDelay: Infinity })) {
  if (!line) continue;
  JSON.parse(line);
  row++;
  writeUpTo(Math.round(row * perRow));
}
writeUpTo(manifest.files.length);
