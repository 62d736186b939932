#!/usr/bin/env node
/**
 * A stand-in for an eval runner, for the WIP/exec/daemon tests: writes a run workspace row by row.
 *
 *   node slow-run-writer.mjs <run-dir> --rows N [--delay-ms D] [--no-summary] [--resume]
 *                            [--sidecars] [--exit-code C] [--trap-term] [--pid-file F]
 *                            [--die-with-parent]
 *
 * Each row is written in two write() calls with a pause between them, so a half-written last line
 * is on disk half of the time. --resume skips test ids already present (complete lines) — what a
 * runner resuming a recovered workspace does. summary.json is written last. --trap-term: on
 * SIGTERM, write "term-received" beside the run and exit 143 (proves signal forwarding).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join, dirname } from 'node:path';

const argv = process.argv.slice(2);
const dir = argv[0];
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : argv[i + 1];
};
const has = (name) => argv.includes(name);
const rows = Number(opt('--rows', '10'));
const delay = Number(opt('--delay-ms', '20'));
const exitCode = Number(opt('--exit-code', '0'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// --die-with-parent: stop as soon as the process that started us is gone (killed with -9), like a
// runner whose supervisor died; keeps kill tests from leaving writers behind.
const parent = process.ppid;
const orphaned = () => has('--die-with-parent') && process.ppid !== parent;

mkdirSync(dir, { recursive: true });
if (opt('--pid-file')) writeFileSync(opt('--pid-file'), String(process.pid));
if (has('--trap-term')) {
  process.on('SIGTERM', () => {
    writeFileSync(join(dirname(dir), `${dir.split('/').pop()}.term-received`), String(Date.now()));
    process.exit(143);
  });
}

mkdirSync(dir, { recursive: true });
const index = join(dir, 'index.jsonl');
const done = new Set();
if (has('--resume') && existsSync(index)) {
  const text = readFileSync(index, 'utf8');
  const lines = text.split('\n');
  // A torn last line (the previous writer was killed mid-row) is cut off before resuming.
  const tail = lines.pop();
  if (tail) writeFileSync(index, lines.map((l) => `${l}\n`).join(''));
  for (const l of lines) if (l.trim()) done.add(JSON.parse(l).test_id);
}
if (!existsSync(index)) writeFileSync(index, '');

for (let i = 0; i < rows; i++) {
  if (orphaned()) process.exit(137);
  const id = `t-${String(i).padStart(4, '0')}`;
  if (done.has(id)) continue;
  const row = {
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    test_id: id,
    suite: 'wip-suite',
    target: 'model-a',
    score: i % 3 === 0 ? 0.5 : 1,
    execution_status: 'ok',
    input: [{ role: 'user', content: `question ${i}` }],
    output: [{ role: 'assistant', content: `answer ${i} `.repeat(8) }],
    duration_ms: 1000 + i,
  };
  if (has('--sidecars')) {
    const rel = `raw/${id}`;
    mkdirSync(join(dir, rel), { recursive: true });
    writeFileSync(join(dir, rel, 'log.txt'), `log of ${id}\n`);
    row.artifacts_dir = rel;
  }
  const line = `${JSON.stringify(row)}\n`;
  const cut = Math.floor(line.length / 2);
  const fd = openSync(index, 'a');
  writeSync(fd, line.slice(0, cut));
  if (delay > 0) await sleep(delay / 2);
  writeSync(fd, line.slice(cut));
  closeSync(fd);
  if (delay > 0) await sleep(delay / 2);
}
if (!has('--no-summary')) writeFileSync(join(dir, 'summary.json'), JSON.stringify({ total: rows }) + '\n');
process.exit(exitCode);
