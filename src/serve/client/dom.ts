/**
 * DOM helpers of the Dashboard's client (the generic ones are the report client's, re-exported).
 * Everything the page shows is untrusted run data: it goes in through textContent and setAttribute
 * of fixed names — never innerHTML, insertAdjacentHTML, document.write or eval. Links built from data are paths of this server or `#` routes
 * (encodeURIComponent), or http(s) URLs checked by safeHttpUrl.
 */
export { add, byId, clear, d, el, svg } from '../../report/client/dom.js';
import { byId, el } from '../../report/client/dom.js';

export const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
export const pct = (x: unknown): string => (isNum(x) ? `${(Math.round(x * 1000) / 10).toFixed(1)}%` : '—');
export const score = (x: unknown): string => (isNum(x) ? x.toFixed(3) : '—');
export const signed = (x: unknown): string => (isNum(x) ? `${x > 0 ? '+' : ''}${x.toFixed(3)}` : '—');
export const cost = (x: unknown): string => (isNum(x) ? `$${x.toFixed(Math.abs(x) >= 1 ? 2 : 4)}` : '—');
export function dur(x: unknown): string {
  if (!isNum(x)) return '—';
  if (x < 1000) return `${Math.round(x)} ms`;
  const s = x / 1000;
  return s < 120 ? `${s.toFixed(1)} s` : `${Math.round(s / 60)} min`;
}
export function bytes(n: unknown): string {
  if (!isNum(n)) return '?';
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
/** A day for an axis: 2026-03-14. */
export const day = (ts: string | undefined): string => (typeof ts === 'string' ? ts.slice(0, 10) : '');

export function flash(id: string, text: string, bad = false): void {
  const m = byId(id);
  m.textContent = text;
  m.className = `msg${bad ? ' bad' : ''}`;
}

export function safeHttpUrl(u: string): string | null {
  try {
    const p = new URL(u);
    return p.protocol === 'https:' || p.protocol === 'http:' ? p.href : null;
  } catch {
    return null;
  }
}

export function setField(root: Element, name: string, text: unknown): void {
  const f = root.querySelector(`[data-field="${name}"]`);
  if (f) f.textContent = String(text);
}

export function fillSelect(sel: HTMLSelectElement, values: string[], keep: string, fixed = 1): void {
  while (sel.options.length > fixed) sel.remove(fixed);
  for (const v of values) {
    const o = el('option', null, v);
    o.value = v;
    sel.appendChild(o);
  }
  sel.value = values.includes(keep) ? keep : (sel.options[0]?.value ?? '');
}

const VERDICTS: Record<string, string> = { pass: 'pass', fail: 'fail', error: 'error', win: 'pass', loss: 'fail', tie: 'tie' };
/** A badge whose class comes from a whitelist, never from data. */
export function badge(text: string): HTMLSpanElement {
  return el('span', `badge ${Object.hasOwn(VERDICTS, text) ? VERDICTS[text] : 'error'}`, text);
}

export function stat(label: string, value: string, key: string): HTMLDivElement {
  const s = el('div', 'stat');
  s.setAttribute('data-stat', key);
  s.appendChild(el('div', 'v', value));
  s.appendChild(el('div', 'k', label));
  return s;
}

export function link(text: string, href: string, cls?: string): HTMLAnchorElement {
  const a = el('a', cls, text);
  a.setAttribute('href', href);
  return a;
}
