/**
 * The pieces the report's table and a test's details are made of: clipped text as plain text, in a
 * block with its truncation note, a diff, a section built on first opening, and the verdict's class
 * name from a whitelist (the verdict is data).
 */
import type { ClippedText } from '../types.js';
import { fmtInt } from '../format.js';
import { add, d, el } from './dom.js';

export const VERDICT_CLASS: Record<string, string> = { pass: 'pass', fail: 'fail', error: 'error' };
export const verdictClass = (v: string) => (Object.hasOwn(VERDICT_CLASS, v) ? VERDICT_CLASS[v]! : 'plain');

/* Clipped text is a string or {head, bytes}. */
export function plain(t: ClippedText | null | undefined): string {
  if (t && typeof t === 'object') return `${t.head} \u2026 [truncated (${fmtInt(t.bytes)} bytes)]`;
  return t === null || t === undefined ? '' : String(t);
}
function truncNote(t: ClippedText | null): HTMLElement | null {
  return t && typeof t === 'object' ? el('div', 'note', `truncated (${fmtInt(t.bytes)} bytes) \u2014 the full text is in the run workspace`) : null;
}
export function textBlock(t: ClippedText | null, cls?: string): DocumentFragment {
  return add(d.createDocumentFragment(), el('pre', cls, t && typeof t === 'object' ? t.head : t === null || t === undefined ? '' : String(t)), truncNote(t));
}
export function diffBlock(t: ClippedText): DocumentFragment {
  const pre = el('pre', 'diff');
  const lines = (t && typeof t === 'object' ? t.head : String(t)).split('\n');
  lines.forEach((line, i) => {
    const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+++') || line.startsWith('---') ? '' : line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : '';
    add(pre, el('span', cls, line + (i < lines.length - 1 ? '\n' : '')));
  });
  return add(d.createDocumentFragment(), pre, truncNote(t));
}
/* A <details> whose body is built the first time it is opened. */
export function collapsible(title: string, build: () => Node, cls: string): HTMLDetailsElement {
  const det = add(el('details', cls), el('summary', null, title));
  let built = false;
  det.addEventListener('toggle', () => {
    if (det.open && !built) {
      built = true;
      det.appendChild(build());
    }
  });
  return det;
}
