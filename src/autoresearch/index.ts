/** The agentv-bench skill's autoresearch loop support: the iterations log, the keep/drop cycle, the trajectory. */
export { IterationSchema, readIterations, parseIterations, appendIteration, type Iteration, type IterationsFile } from './iterations.js';
export { trajectoryData, type TrajectoryData, type TrajectoryPoint } from './trajectory-data.js';
export { trajectoryFragment, renderTrajectoryHtml, TRAJECTORY_CSP, TRAJECTORY_CSS, type TrajectoryPageOptions } from './trajectory-html.js';
export {
  recordCycle,
  RecordCycleOptionsSchema,
  renderTrajectory,
  autoresearchPaths,
  cycleMetrics,
  writeTrajectory,
  type RecordCycleOptions,
  type RecordCycleResult,
  type AutoresearchPaths,
  type CycleMetrics,
} from './record.js';
