export { startServer, ServeOptionsSchema, type ServeOptions, type RunningServer } from './server.js';
export { TOKEN_HEADER } from './security.js';
export { remoteStatus, remoteSync, RemoteState, type RemoteStatus } from './remote-api.js';
