/**
 * One catalog blob's lines as listed rows (`list`'s read of the per-day catalog files): checked
 * structurally, a bad line costing only itself.
 */
import type { ListedRun } from './list-types.js';

type Row = Omit<ListedRun, 'where'>;

/**
 * Parses one catalog blob. The usual case (every line valid) is a single JSON.parse of the lines
 * joined as an array, with a structural check per row: a JSON.parse plus a zod parse per line cost
 * 4-9 ms per 3,000 rows here against 3-4 ms (measured), and `list` exists to stay flat as the
 * catalog grows. A blob with a bad line falls back to line by line, so a bad line costs only itself.
 */
export function parseCatalog(text: string, day: string): { rows: Row[]; bad: number } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  let values: unknown[] | null = null;
  try {
    values = JSON.parse(`[${lines.join(',')}]`) as unknown[];
    if (values.length !== lines.length) values = null; // a line holding two values: be careful
  } catch {
    // fallback: one bad line; parsed line by line below
    values = null;
  }
  if (values === null) {
    values = lines.map((l) => {
      try {
        return JSON.parse(l) as unknown;
      } catch {
        // unparsable: that line counts as no row; validate reports it
        return undefined;
      }
    });
  }
  const rows: Row[] = [];
  let bad = 0;
  for (const v of values) {
    const row = catalogEntry(v, day);
    if (row) rows.push(row);
    else bad++;
  }
  return { rows, bad };
}

/** The fields of CatalogRowSchema that `list` shows, checked structurally (see parseCatalog). */
function catalogEntry(v: unknown, day: string): Row | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  const { run_id, experiment, timestamp, path, targets, total, passed, failed, pass_rate } = r;
  if (typeof run_id !== 'string' || typeof experiment !== 'string' || typeof timestamp !== 'string' || typeof path !== 'string') return null;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) return null;
  if (typeof total !== 'number' || typeof passed !== 'number' || typeof failed !== 'number' || typeof pass_rate !== 'number') return null;
  const row: Row = { run_id, experiment, day, timestamp, path, targets: targets as string[], total, passed, failed, pass_rate, writer: 'agentv-results' };
  if (typeof r.archived === 'string') row.archived = r.archived;
  return row;
}
