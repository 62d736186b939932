/**
 * The two ways data enters the report's HTML, and the only two.
 *
 * 1. `escapeHtml` for the few server-rendered pieces (summary cards, suite table, SVG labels):
 *    every character that can open markup or close an attribute becomes an entity.
 * 2. `jsonForScript` for the data islands (`<script type="application/json">`). Inside a script
 *    element the HTML parser only looks for `</script` (and `<!--` switches it into the
 *    "escaped" states that can swallow the real end tag), so `<` must never appear literally;
 *    `>` and `&` are escaped too so the island can never be read as markup by any tool, and
 *    U+2028/U+2029 so the text stays valid even if someone pastes it into a JS string literal.
 *    Those characters can only occur inside JSON strings, where `\uXXXX` means the same thing,
 *    so the result is still exactly the same JSON value.
 */

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for an HTML text node or a quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/g;

function unicodeEscape(c: string): string {
  return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
}

/** JSON text that is safe as the content of a `<script type="application/json">` element. */
export function jsonForScript(value: unknown): string {
  // JSON.stringify already escapes control characters and lone surrogates.
  return JSON.stringify(value).replace(SCRIPT_UNSAFE, unicodeEscape);
}
