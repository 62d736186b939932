import type { CAC } from 'cac';
import { registerExport } from './export.js';
import { registerPublish } from './publish.js';
import { registerReport } from './report.js';
import { registerSchema } from './schema.js';
import { registerSummary } from './summary.js';
import { registerFailures } from './failures.js';
import { registerShow } from './show.js';
import { registerValidate } from './validate.js';
import { registerCombine } from './combine.js';
import { registerDelete } from './delete.js';
import { registerCompare } from './compare.js';
import { registerList } from './list.js';
import { registerStatus } from './status.js';
import { registerPull } from './pull.js';
import { registerSync } from './sync.js';
import { registerTag } from './tag.js';
import { registerFeedback } from './feedback.js';
import { registerDrivers } from './drivers.js';
import { registerMergeDriver } from './merge-driver.js';
import { registerWip } from './wip.js';
import { registerExec } from './exec.js';
import { registerDaemon } from './daemon.js';

/** Every command the binary offers; one module per command. */
export function registerCommands(cli: CAC): void {
  registerExport(cli);
  registerPublish(cli);
  registerReport(cli);
  registerSchema(cli);
  registerSummary(cli);
  registerFailures(cli);
  registerShow(cli);
  registerValidate(cli);
  registerCombine(cli);
  registerDelete(cli);
  registerCompare(cli);
  registerList(cli);
  registerStatus(cli);
  registerPull(cli);
  registerSync(cli);
  registerTag(cli);
  registerFeedback(cli);
  registerDrivers(cli);
  registerMergeDriver(cli);
  registerWip(cli);
  registerExec(cli);
  registerDaemon(cli);
}
