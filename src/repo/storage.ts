/**
 * Which storage mode a target uses, and its object store when that is `hybrid` (AgentV's
 * results-storage plan): one place that turns `results.storage_mode` / `results.object_store` into
 * the client every writer and reader shares.
 */
import { ObjectStore, type ObjectStoreOptions } from '../store/object-store.js';
import type { ResultsConfig } from './config.js';

/** The bucket client of a `hybrid` configuration; null in `git-native` mode. */
export function objectStoreFor(config: ResultsConfig, opts: ObjectStoreOptions = {}): ObjectStore | null {
  if (config.storage_mode !== 'hybrid' || !config.object_store) return null;
  return new ObjectStore(config.object_store, opts);
}

/**
 * A reader's bucket client: the configured one, whatever the mode (a team that went back to
 * git-native still reads the runs it published in hybrid). Null when no object store is configured.
 */
export function objectStoreForReading(config: ResultsConfig, opts: ObjectStoreOptions = {}): ObjectStore | null {
  return config.object_store ? new ObjectStore(config.object_store, opts) : null;
}
