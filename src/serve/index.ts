export { startServer, ServeError, type ServeOptions, type RunningServer } from './server.js';
export { TOKEN_HEADER } from './security.js';
export { remoteStatus, remoteSync, RemoteState, type RemoteStatus } from './remote-api.js';
export {
  buildSeries as dashboardTrendSeries,
  REGRESSION as DASHBOARD_REGRESSION,
  type TrendPoint as DashboardTrendPoint,
  type TrendSeries as DashboardTrendSeries,
} from './trend-series.js';
