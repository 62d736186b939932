// Door rows of the verbs around a live team: tags and feedback, WIP checkpoints, the daemon and exec, the Dashboard's server, the static site, and the process-wide helpers.
import type { DoorGroup } from './types.js';

export const live: DoorGroup = {
  verbs: [
    'editTags',
    'readTags',
    'setFeedback',
    'readFeedback',
    'moveTag',
    'checkpointWip',
    'cleanWipBranches',
    'listWipBranches',
    'recoverWipRun',
    'WipSession',
    'execRun',
    'runDaemon',
    'createLogger',
    'webhookFrom',
    'setNoticeSink',
    'startServer',
    'site',
    'exitCodeFor',
  ],
  anyInput: { exitCodeFor: 'it maps any thrown value to its exit code (70 for what is not one of ours): no input is wrong for it' },
  rows: [],
  cli: [],
};
