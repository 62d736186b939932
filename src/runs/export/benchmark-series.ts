/**
 * benchmark.json's per-configuration statistics, computed the way skill-creator's
 * `aggregate_benchmark.py` computes them from the skill-creator layout, so the two agree exactly:
 *
 * - one value per run, taken as the script reads it back from the files we write (pass rate
 *   already rounded to 4 digits, seconds already rounded to 4 digits, tokens = total tokens or,
 *   when there are none, the answer's length in characters);
 * - the values of a configuration summed in the order the script meets them: eval folders and
 *   run folders sorted by name as text (`eval-10` before `eval-2`);
 * - configurations in the order the script discovers them (the first eval folder's configuration
 *   folders sorted by name, then new ones from the next eval folder…), which decides `delta`:
 *   the first minus the second, present even for one configuration (minus nothing), as there;
 * - Python's sum, round and `+.2f` formatting (see py-compat.ts).
 *
 * Memory grows with the row count (one small entry per run), like benchmark.json's runs[].
 */
import { pySignedFixed, pyStats } from './python-numbers.js';

export type Stat = { mean: number; stddev: number; min: number; max: number };
export const METRICS = ['pass_rate', 'time_seconds', 'tokens', 'tool_calls', 'cost_usd', 'score'] as const;
export type Metric = (typeof METRICS)[number];

export interface SeriesEntry {
  evalId: number;
  runNumber: number;
  values: Record<Metric, number>;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const folderOrder = (a: SeriesEntry, b: SeriesEntry) => byText(`eval-${a.evalId}`, `eval-${b.evalId}`) || byText(`run-${a.runNumber}`, `run-${b.runNumber}`);

export class ConfigurationSeries {
  private readonly byConfig = new Map<string, SeriesEntry[]>();

  add(configuration: string, entry: SeriesEntry): void {
    const list = this.byConfig.get(configuration) ?? [];
    this.byConfig.set(configuration, list);
    list.push(entry);
  }

  /** Configuration names in the order aggregate_benchmark.py discovers their folders. */
  order(): string[] {
    const pairs: { folder: string; config: string }[] = [];
    for (const [config, list] of this.byConfig) {
      for (const evalId of new Set(list.map((e) => e.evalId))) pairs.push({ folder: `eval-${evalId}`, config });
    }
    pairs.sort((a, b) => byText(a.folder, b.folder) || byText(a.config, b.config));
    return [...new Set(pairs.map((p) => p.config))];
  }

  runSummary(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const names = this.order();
    for (const name of names) {
      const list = [...this.byConfig.get(name)!].sort(folderOrder);
      out[name] = Object.fromEntries(METRICS.map((m) => [m, pyStats(list.map((e) => e.values[m]))]));
    }
    const mean = (name: string | undefined, m: Metric) => (name === undefined ? 0 : (out[name] as Record<Metric, Stat>)[m].mean);
    const [a, b] = names;
    out.delta = {
      pass_rate: pySignedFixed(mean(a, 'pass_rate') - mean(b, 'pass_rate'), 2),
      time_seconds: pySignedFixed(mean(a, 'time_seconds') - mean(b, 'time_seconds'), 1),
      tokens: pySignedFixed(mean(a, 'tokens') - mean(b, 'tokens'), 0),
    };
    return out;
  }
}
