/** A parsed JSON value that is an object: not null, not an array (its keys are the document's own). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
