// Door rows of the run verbs (derive, read, inspect, report) and the attempt statistics.
import type { DoorGroup } from './types.js';

export const runs: DoorGroup = {
  verbs: [
    'exportRun',
    'loadRun',
    'summarizeRun',
    'listFailures',
    'showCases',
    'validateRun',
    'combineRuns',
    'deleteRuns',
    'planDelete',
    'generateReport',
    'attemptStats',
    'attemptsOf',
    'meanAttemptRate',
    'passAtK',
    'passHatK',
    'runAttemptStats',
    'wilsonInterval',
  ],
  rows: [
    { verb: 'summarizeRun', what: 'run is a number', call: (lib) => lib.summarizeRun({ run: 42 as never }), option: 'run' },
    { verb: 'summarizeRun', what: 'targets is a string', call: (lib) => lib.summarizeRun({ run: 'x', targets: 'a' as never }), option: 'targets' },
    { verb: 'summarizeRun', what: 'a misspelt option', call: (lib) => lib.summarizeRun({ run: 'x', recompte: true } as never), option: 'recompte' },
  ],
  cli: [{ argv: ['summary'], names: 'run' }],
};
