/**
 * `@aws-sdk/client-s3`, loaded on first use only: an optional peer dependency that only users of
 * storage_mode hybrid install, so commands that never touch a bucket (and every command in
 * `git-native` mode) do not pay for it at start-up, and a default install that lacks it is told
 * what to install, with the range this version is tested with.
 */
import { ObjectStoreError } from '../errors/store-errors.js';

export type S3Module = typeof import('@aws-sdk/client-s3');
export type S3Client = import('@aws-sdk/client-s3').S3Client;

let sdk: Promise<S3Module> | null = null;
export function loadSdk(): Promise<S3Module> {
  // The SDK warns in every process on Node < 22 that its releases after January 2027 will need
  // Node 22; ours is pinned to a release that supports our engines (Node >= 20.19). Left on unless
  // the user decided.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // An optional peer dependency: only users of storage_mode hybrid install it (package.json).
  sdk ??= import('@aws-sdk/client-s3').catch((err: unknown) => {
    sdk = null;
    if (isMissingModule(err))
      throw new ObjectStoreError(
        `storage_mode hybrid needs the S3 client, which is not installed: run \`npm i ${S3_CLIENT_PACKAGE}@${S3_CLIENT_RANGE}\` next to agentv-results (a default install leaves it out)`,
        'config',
        { operation: 'load the S3 client' },
      );
    throw err;
  });
  return sdk;
}

/** The S3 client package and the range this version is tested with (package.json's peerDependencies). */
const S3_CLIENT_PACKAGE = '@aws-sdk/client-s3';
const S3_CLIENT_RANGE = '~3.1175.0';

function isMissingModule(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((err as Error).message).includes(S3_CLIENT_PACKAGE);
}
