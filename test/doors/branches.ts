// Door rows of the verbs that read and write the shared branches: sync, list, pull, run names, status, configuration, merge drivers, archive, retention, storage.
import type { DoorGroup } from './types.js';

export const branches: DoorGroup = {
  verbs: [
    'sync',
    'resolveSyncBranch',
    'listRuns',
    'pull',
    'namedPaths',
    'resolveRunNames',
    'status',
    'loadResultsConfig',
    'installDrivers',
    'uninstallDrivers',
    'driversState',
    'rollover',
    'expireRuns',
    'expireAndPush',
    'rolloverAndPush',
    'migrateStorage',
  ],
  rows: [],
  cli: [],
};
