/**
 * One key style for the JSON we print (`--json`, `--log-format json`): AgentV's, snake_case. The
 * library's results name their own fields in camelCase (TypeScript's style); on the way out, every
 * identifier key in camelCase becomes snake_case (`runId` -> `run_id`, `remoteSeenAt` ->
 * `remote_seen_at`). Keys that are data are never touched, and these fields say where data keys are:
 */
/**
 * Maps keyed by data — target, tool and evaluator names: their keys are kept, their values
 * converted. (`scores` is compare's matrix, target -> score; where `scores` is a list, as in a row,
 * its items are ordinary objects.)
 */
export const JSON_DATA_KEYED_FIELDS: ReadonlySet<string> = new Set(['run_summary', 'per_evaluator_summary', 'by_tool', 'scores']);
/** Documents in a format of their own — a run's metadata (the user's), a tags or feedback document as stored on the branch (feedback's entries are keyed by test id and reviewer): printed as they are. */
export const JSON_VERBATIM_FIELDS: ReadonlySet<string> = new Set(['metadata', 'document']);

const CAMEL_IDENTIFIER = /^[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+$/;

/** `remoteSeenAt` -> `remote_seen_at`; any other key (snake_case, data, punctuation) as it is. */
export function snakeKey(key: string): string {
  if (!CAMEL_IDENTIFIER.test(key)) return key;
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The `--json` form of a result: identifier keys in snake_case (see above). A key whose snake_case
 * name the object already has stays as it is, so nothing is overwritten.
 */
export function jsonKeys(value: unknown, keysAreData = false): unknown {
  if (Array.isArray(value)) return value.map((v) => jsonKeys(v));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const snake = keysAreData ? k : snakeKey(k);
    const key = snake !== k && Object.hasOwn(value, snake) ? k : snake;
    out[key] = JSON_VERBATIM_FIELDS.has(key) && !keysAreData ? v : jsonKeys(v, !keysAreData && JSON_DATA_KEYED_FIELDS.has(key));
  }
  return out;
}
