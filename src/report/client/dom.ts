/**
 * DOM helpers shared by the report's client and the Dashboard's (src/serve/client/dom.ts adds its
 * own on top). Untrusted text goes in through textContent / createTextNode and attributes of fixed
 * names only.
 */
export const d = document;

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = d.getElementById(id);
  // Browser code: a page without its own element is a build bug; not the library's error model.
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string | null, text?: unknown): HTMLElementTagNameMap[K] {
  const e = d.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** Append the children that are not null; returns the parent. */
export function add<T extends Node>(parent: T, ...children: (Node | null | undefined | false)[]): T {
  for (const c of children) if (c) parent.appendChild(c);
  return parent;
}

export function clear(e: Element): void {
  while (e.firstChild) e.removeChild(e.firstChild);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag: string, attrs: Record<string, string | number> = {}): SVGElement {
  const e = d.createElementNS(SVG_NS, tag) as SVGElement;
  for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
  return e;
}
