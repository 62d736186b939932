/** The push loop: `sync` (integrate the remote's tips, push both branches atomically, set a genuine conflict aside) and `sync --resolve`. */
export { sync, type SyncOptions, type SyncResult } from './sync.js';
export { resolveSyncBranch, type ResolveSyncOptions, type ResolveSyncResult } from './resolve.js';
