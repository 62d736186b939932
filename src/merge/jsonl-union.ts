/**
 * jsonl-union: three-way set merge of append-only JSONL files (`index.jsonl`, `catalog/*.jsonl`).
 *
 * Git's built-in `union` driver is not enough: it concatenates both sides' hunks, so a row that one
 * side deleted comes back, and a row both sides appended appears twice. Here every row has an
 * identity (see identity.ts) and each identity is resolved three-way (see keyed-merge.ts):
 *
 * - added on either side -> kept once; added identically on both -> kept once;
 * - deleted on one side, untouched on the other -> stays deleted; deleted on both -> deleted;
 * - changed on one side only -> the change; changed identically on both -> clean;
 * - changed differently on both, added on both with different content, or changed on one side and
 *   deleted on the other -> a genuine conflict.
 *
 * Output order: surviving base rows in base order, then ours' additions, then theirs' additions.
 * Blank lines are ignored; CRLF is accepted; output uses LF and ends with a newline when not
 * empty. A line that is not valid JSON is an opaque row keyed by its exact text: it is never
 * dropped and never throws. "Changed" means the canonical JSON differs, so re-formatting a row
 * (key order, spaces) is not a change.
 */
import { canonicalJson, stripBom } from '../util/canonical-json.js';
import { conflictBlockLines } from './conflict-markers.js';
import { defaultRowIdentity, type RowIdentity } from './row-identity.js';
import { groupByKey, mergeKeyed, type KeyedConflictReason, type KeyedSide } from './keyed-merge.js';

export interface JsonlMergeOptions {
  /** Row identity; defaults to `defaultRowIdentity`. Not called for lines that are not JSON. */
  readonly identity?: RowIdentity;
}

export interface JsonlConflict {
  /** The identity both versions share (as returned by the identity function). */
  readonly identity: string;
  readonly reason: KeyedConflictReason;
  /** The row's lines on each side, exactly as written; empty when absent on that side. */
  readonly base: readonly string[];
  readonly ours: readonly string[];
  readonly theirs: readonly string[];
}

export type JsonlMergeResult =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly conflicts: JsonlConflict[];
      /** Best effort for a human: clean rows merged, each conflict as a marker block with both versions. */
      readonly text: string;
    };

interface Row {
  /** The line without its terminator. */
  readonly line: string;
  /** Internal key: 'v' + identity for JSON rows, 'o' + line for opaque rows (separate namespaces). */
  readonly key: string;
  /** Whether the line parsed as JSON. The parsed value itself is not kept (see sameRow). */
  readonly valid: boolean;
}

function sameRow(a: Row, b: Row): boolean {
  if (a === b || a.line === b.line) return true;
  // Opaque rows are keyed by their text, so equal keys already mean equal text. Two JSON lines that
  // share an identity but differ in text are rare (an edited row), so they are re-parsed here
  // rather than keeping every parsed row alive for the whole merge (measured: less GC time).
  if (!a.valid || !b.valid) return false;
  try {
    return canonicalJson(JSON.parse(a.line)) === canonicalJson(JSON.parse(b.line));
  } catch {
    return false; // nested too deep to canonicalize: different texts count as different versions
  }
}

/** The non-blank lines of a text, without terminators (LF or CRLF). */
function contentLines(text: string): string[] {
  const lines: string[] = [];
  for (const raw of stripBom(text).split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // Cheap blank test: JSON object rows start with "{", so trim() rarely runs.
    if (line.length > 0 && (line.charCodeAt(0) === 0x7b || line.trim() !== '')) lines.push(line);
  }
  return lines;
}

/** Parses lines into keyed rows. */
class RowParser {
  constructor(private readonly identity: RowIdentity) {}

  /**
   * Rows of one side. The files are append-only, so ours and theirs usually start with base's
   * lines verbatim: that common prefix reuses base's rows without parsing them again, and only the
   * appended tail is parsed. (A cache of every line was measured slower: hashing long lines costs
   * more than the rare duplicate parse it saves.)
   */
  rows(lines: readonly string[], reference?: { lines: readonly string[]; rows: readonly Row[] }): Row[] {
    const rows: Row[] = [];
    let i = 0;
    if (reference !== undefined) {
      const limit = Math.min(lines.length, reference.lines.length);
      while (i < limit && lines[i] === reference.lines[i]) rows.push(reference.rows[i++] as Row);
    }
    for (; i < lines.length; i++) rows.push(this.row(lines[i] as string));
    return rows;
  }

  /** A line that is not JSON, or whose identity cannot be computed, is an opaque row: kept, never thrown. */
  private row(line: string): Row {
    try {
      const value: unknown = JSON.parse(line);
      return { line, key: `v${this.identity(value, line)}`, valid: true };
    } catch {
      // unparsable: kept by its line, never merged as a row
      return { line, key: `o${line}`, valid: false };
    }
  }
}

function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

const linesOf = (rows: readonly Row[]): string[] => rows.map((row) => row.line);

/** Three-way merge of JSONL texts. Pure; never throws on malformed input. */
export function mergeJsonl(base: string, ours: string, theirs: string, opts: JsonlMergeOptions = {}): JsonlMergeResult {
  const parser = new RowParser(opts.identity ?? defaultRowIdentity);
  const baseLines = contentLines(base);
  const baseRows = parser.rows(baseLines);
  const reference = { lines: baseLines, rows: baseRows };
  const side = (rows: readonly Row[]): KeyedSide<Row> => groupByKey(rows, (row) => row.key, sameRow);
  const steps = mergeKeyed(side(baseRows), side(parser.rows(contentLines(ours), reference)), side(parser.rows(contentLines(theirs), reference)), {
    same: sameRow,
  });

  const out: string[] = [];
  const conflicts: JsonlConflict[] = [];
  for (const step of steps) {
    if (step.kind === 'take') {
      for (const row of step.items) out.push(row.line);
      continue;
    }
    const conflict: JsonlConflict = {
      identity: step.key.slice(1),
      reason: step.reason,
      base: linesOf(step.base),
      ours: linesOf(step.ours),
      theirs: linesOf(step.theirs),
    };
    conflicts.push(conflict);
    out.push(...conflictBlockLines(conflict));
  }
  const text = joinLines(out);
  return conflicts.length === 0 ? { ok: true, text } : { ok: false, conflicts, text };
}
