/**
 * `_autoresearch/iterations.jsonl` (the agentv-bench skill): one line per cycle of the unattended
 * eval-improve loop, read by the trajectory chart and the mutator.
 *
 * The agentv-bench skill's fields come first and keep its names and meanings (cycle, score, decision,
 * cost_usd, assertions, mutation, run_dir, timestamp); what we add rides along after them
 * (run_path, baseline, compare). Lines written by the skill's own `echo … >>` are read the same
 * way. A malformed line is skipped with a warning — the file is appended to by shell one-liners
 * and must never stop the chart from showing the rest.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod';
import { jsonlLines } from '../util/jsonl-objects.js';
import { openRegularFile, readRegularText } from '../util/safe-open.js';
import { parseArgs } from '../options/verb-options.js';

export const IterationSchema = z.looseObject({
  cycle: z.number().int().positive(),
  score: z.number(),
  decision: z.enum(['keep', 'drop']),
  cost_usd: z.number().default(0),
  assertions: z.record(z.string(), z.number()).default({}),
  mutation: z.string().default(''),
  run_dir: z.string().default(''),
  timestamp: z.string().default(''),
});
export type Iteration = z.infer<typeof IterationSchema>;

export interface IterationsFile {
  iterations: Iteration[];
  warnings: string[];
}

/** Read an experiment's iterations.jsonl: its cycles, and a warning for each line that cannot be read. */
export async function readIterations(path: string): Promise<IterationsFile> {
  parseArgs('readIterations', { path: z.string() }, [path]);
  let text: string;
  try {
    text = await readRegularText(path, { kind: 'log' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { iterations: [], warnings: [] };
    throw err;
  }
  return parseIterations(text, path);
}

export function parseIterations(text: string, label = 'iterations.jsonl'): IterationsFile {
  const iterations: Iteration[] = [];
  const warnings: string[] = [];
  for (const { line, value, error } of jsonlLines(text)) {
    if (error !== undefined) {
      warnings.push(`${label}:${line}: not valid JSON, line skipped`);
      continue;
    }
    const parsed = IterationSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      warnings.push(`${label}:${line}: ${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'invalid'}, line skipped`);
      continue;
    }
    iterations.push(parsed.data);
  }
  return { iterations, warnings };
}

/**
 * Append one line. If a crashed writer left a last line without its newline, start on a fresh
 * line so the new cycle is not glued to the broken one (the broken one is then skipped on read).
 */
export async function appendIteration(path: string, line: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  let prefix = '';
  // Opened through the one opener even to append: a pipe or device there is refused, not written.
  const opened = await openRegularFile(path, { kind: 'log', limit: Number.MAX_SAFE_INTEGER }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (opened) {
    const fh = opened.handle;
    try {
      const size = opened.size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await fh.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n';
      }
    } finally {
      await fh.close();
    }
  }
  // One write call of one short line with O_APPEND: it lands whole at the end of the file.
  await appendFile(path, prefix + JSON.stringify(line) + '\n', 'utf8');
}
