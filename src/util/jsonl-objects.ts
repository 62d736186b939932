/**
 * The JSON objects of a JSONL text, leniently: blank lines, lines that do not parse and values
 * that are not objects are skipped (each costs only itself). For readers that take what a run's
 * index holds and leave reporting bad lines to `validate`.
 */
export function jsonlObjects(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(value as Record<string, unknown>);
  }
  return out;
}
