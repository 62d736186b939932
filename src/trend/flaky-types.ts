/** The flaky report's types, Node-free: `flaky --json`, `/api/flaky` and the Dashboard's script share them (./flaky.ts computes them). */

export type FlakyClass = 'newly failing' | 'flaky' | 'stable fail' | 'stable pass';

/** One run of a test: its attempts and the run's verdict for it. */
export interface FlakyRunCell {
  run_id: string;
  passed: number;
  total: number;
  verdict: 'pass' | 'fail' | 'error';
}

export interface FlakyTest {
  test_id: string;
  target: string | null;
  class: FlakyClass;
  /** Attempts passed / total over the runs. */
  passed: number;
  total: number;
  /** Attempt success rate and its 95% Wilson score interval. */
  pass_rate: number;
  interval: { low: number; high: number };
  /** Runs holding the test, and how many times its verdict changed from one to the next. */
  runs: number;
  flips: number;
  /** Oldest first. */
  history: FlakyRunCell[];
}

export interface FlakyReport {
  experiment: string | null;
  /** The runs read, oldest first. */
  runs: { run_id: string; timestamp: string | null }[];
  tests: FlakyTest[];
  summary: Record<FlakyClass, number>;
  warnings: string[];
}
