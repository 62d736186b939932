// Door rows of the verbs that judge runs: compare, the gate, keep/discard, trend, flaky, autoresearch, and the Markdown of their reports.
import type { DoorGroup } from './types.js';

export const judge: DoorGroup = {
  verbs: [
    'compareRuns',
    'compareTargets',
    'gateCheck',
    'gateRuns',
    'decide',
    'trend',
    'flaky',
    'recordCycle',
    'readIterations',
    'renderTrajectory',
    'compareMarkdown',
    'gateErrorMarkdown',
    'gateMarkdown',
    'gateNoBaselineMarkdown',
    'summaryMarkdown',
    'flakyMarkdown',
    'trendMarkdown',
  ],
  rows: [],
  cli: [],
};
