/**
 * Pretty printer for merged JSON documents: byte-identical to `JSON.stringify(value, null, 2)` for
 * ordinary values, and able to print a conflict in place, as a git-style marker block around the
 * conflicting object entry or array element, so a person sees exactly which value to choose.
 */
import { conflictBlockLines } from './conflict-markers.js';
import { isJsonObject } from '../util/canonical-json.js';

/**
 * Placeholder for an unresolved value inside a merged tree. Each side lists the value(s) that side
 * has at this position; an empty list means the value is absent (deleted / never added) there.
 */
export class ConflictNode {
  constructor(
    readonly base: readonly unknown[],
    readonly ours: readonly unknown[],
    readonly theirs: readonly unknown[],
  ) {}
}

const STEP = '  ';

/** Render one side of a conflict: each value as it would appear at this position. */
function sideLines(values: readonly unknown[], prefix: string, indent: string, comma: string): string[] {
  return values.map((value) => `${indent}${prefix}${render(value, indent)}${comma}`);
}

function conflictLines(node: ConflictNode, prefix: string, indent: string, comma: string): string[] {
  return conflictBlockLines({
    base: sideLines(node.base, prefix, indent, comma),
    ours: sideLines(node.ours, prefix, indent, comma),
    theirs: sideLines(node.theirs, prefix, indent, comma),
  });
}

function render(value: unknown, indent: string): string {
  if (value instanceof ConflictNode) {
    // Only reachable for a conflict at the document root; nested ones are handled by the parent.
    return conflictLines(value, '', indent, '').join('\n');
  }
  const inner = indent + STEP;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const lines = value.flatMap((item: unknown, i) => {
      const comma = i < value.length - 1 ? ',' : '';
      return item instanceof ConflictNode ? conflictLines(item, '', inner, comma) : [`${inner}${render(item, inner)}${comma}`];
    });
    return `[\n${lines.join('\n')}\n${indent}]`;
  }
  if (isJsonObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return '{}';
    const lines = keys.flatMap((key, i) => {
      const comma = i < keys.length - 1 ? ',' : '';
      const prefix = `${JSON.stringify(key)}: `;
      const item = value[key];
      return item instanceof ConflictNode ? conflictLines(item, prefix, inner, comma) : [`${inner}${prefix}${render(item, inner)}${comma}`];
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Pretty JSON (2-space indent) with a trailing newline; conflicts rendered as marker blocks. */
export function renderJson(value: unknown): string {
  return `${render(value, '')}\n`;
}
