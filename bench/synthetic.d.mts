/** Types for the synthetic results generator (bench/synthetic.mjs), used by tests. */
export interface SyntheticOptions {
  targets?: string[];
  turns?: number;
  testsPerSuite?: number;
}
export function rng(seed: number): () => number;
export function syntheticRow(r: () => number, i: number, opts?: SyntheticOptions): Record<string, unknown>;
export function writeSyntheticResults(path: string, opts: SyntheticOptions & { bytes?: number; rows?: number; seed?: number }): Promise<number>;
