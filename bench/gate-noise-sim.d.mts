import type { GateCase, GateDecision, GateDecisionOptions } from '../src/gate/gate-decision.js';

export function suiteRates(r: () => number, tests: number): number[];
export function simulatedCases(
  r: () => number,
  opts?: { tests?: number; attempts?: number; runs?: number; degrade?: { count: number; rate: number } | null },
): { cases: GateCase[]; degraded: Set<string> };
export function wilson(k: number, n: number, z?: number): [number, number];
export interface SimulationResult {
  trials: number;
  failed: number;
  rate: number;
  interval: [number, number];
  degradedTotal: number;
  degradedNamed: number;
  otherNamed: number;
}
export function simulateGate(opts: {
  decide: (cases: GateCase[], opts: GateDecisionOptions) => GateDecision;
  seed?: number;
  trials?: number;
  tests?: number;
  attempts?: number;
  runs?: number;
  degrade?: { count: number; rate: number } | null;
  confidence?: number;
  tolerance?: number;
  history?: boolean;
}): SimulationResult;
