/**
 * With AGENTV_TEST_CPU_LOG=<file>, each test file appends one line: the CPU its own test process
 * used and the CPU of the processes it started and waited for (git, the CLI where a test spawns
 * it, Chromium, AgentV), from /proc/self/stat. `npm run bench -- tiers` reads it to say where the
 * suite's time goes; `pid` ties the line to the process, so a per-process account of the run (Linux
 * process accounting, say) can be split by file. Without the variable this does nothing.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll } from 'vitest';

const log = process.env.AGENTV_TEST_CPU_LOG;

/** utime, stime, cutime, cstime in seconds (USER_HZ is 100 on Linux). */
function times(): number[] {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [fields[11], fields[12], fields[13], fields[14]].map((f) => Number(f) / 100);
}

if (log) {
  const start = times();
  // biome-ignore lint/correctness/noEmptyPattern: vitest requires a destructuring first parameter; the file is the second.
  afterAll(({}, suite) => {
    const [u, s, cu, cs] = times().map((t, i) => t - start[i]!);
    const file = basename((suite as { filepath?: string }).filepath ?? 'unknown');
    appendFileSync(log, `${JSON.stringify({ file, pid: process.pid, self: +(u! + s!).toFixed(2), children: +(cu! + cs!).toFixed(2) })}\n`);
  });
}
