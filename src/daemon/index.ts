/**
 * The daemon layer as a library: `runDaemon` (watch, checkpoint, publish, push, durable outbox),
 * `execRun` (run an eval command under checkpointing, publish when it exits), the outbox and the
 * status sections. Sits above src/publish, src/sync and src/wip (ARCHITECTURE.md); never runs git itself.
 */
export { runDaemon } from './daemon.js';
export { DaemonOptionsSchema, DEFAULT_ROOT } from './daemon-options.js';
export type { DaemonOptions, DaemonReport } from './daemon-options.js';
export { execRun, ExecOptionsSchema } from './exec.js';
export type { ExecOptions, ExecReport, ExecRunReport } from './exec.js';
export { finishRun } from './finish-run.js';
export type { FinishRunOptions, FinishRunResult } from './finish-run.js';
export { jobId, Outbox, outboxPath } from './outbox.js';
export type { OutboxItem, OutboxJob } from './outbox.js';
export { acquireDaemonLock, daemonRunning, readDaemonInfo } from './instance-lock.js';
export type { DaemonInfo, DaemonLock } from './instance-lock.js';
export { createLogger, silentLogger } from './log.js';
export type { LogFormat, Logger, LogLevel } from './log.js';
