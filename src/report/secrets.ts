/**
 * A report is meant to be shared (GitHub Pages), and agent transcripts pick up credentials and
 * home directories. Before writing, every string the report embeds is scanned for a few
 * high-signal patterns. Findings are warnings (the data is the user's to publish), reported per
 * kind with the affected test ids — the matched text itself is never printed, so the warning
 * cannot leak what it warns about into CI logs.
 */

export type SecretKind = 'api_key' | 'bearer_token' | 'private_key' | 'local_path';

const PATTERNS: { kind: SecretKind; re: RegExp }[] = [
  // OpenAI/Anthropic-style keys: sk-, sk-proj-, sk-ant-api03-… followed by a long token.
  { kind: 'api_key', re: /\bsk-[A-Za-z0-9_-]{16,}/ },
  { kind: 'bearer_token', re: /\bBearer\s+[A-Za-z0-9._~+/=-]{12,}/i },
  { kind: 'private_key', re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/ },
  // A home directory, not any path that happens to contain "home/" (app/home/page.tsx).
  { kind: 'local_path', re: /(?<![\w.-])\/(?:home|Users)\/[^\s/]+|\b[A-Za-z]:\\Users\\[^\s\\]+/ },
];

export const SECRET_LABELS: Record<SecretKind, string> = {
  api_key: 'API key (sk-…)',
  bearer_token: 'Bearer token',
  private_key: 'private key block (-----BEGIN … PRIVATE KEY-----)',
  local_path: 'local path (/home/… or /Users/…)',
};

/** The kinds of sensitive text found in `text`. */
export function secretKinds(text: string): SecretKind[] {
  return PATTERNS.filter((p) => p.re.test(text)).map((p) => p.kind);
}

function collectStrings(value: unknown, out: string[], depth = 0): void {
  if (typeof value === 'string') out.push(value);
  else if (depth > 32 || value === null || typeof value !== 'object') return;
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out, depth + 1);
  else for (const v of Object.values(value)) collectStrings(v, out, depth + 1);
}

/** Test ids are data and end up on a terminal: show control characters as escapes, never raw. */
function printable(label: string): string {
  return label.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Collects findings per kind and turns them into one warning line per kind. */
export class SecretScanner {
  private readonly found = new Map<SecretKind, Set<string>>();

  /** Scan every string inside `value` (object keys are ours, only values come from data). */
  scan(label: string, ...values: unknown[]): void {
    const strings: string[] = [];
    for (const v of values) collectStrings(v, strings);
    // One pass per pattern over the joined text: cheaper than testing thousands of small strings.
    for (const kind of secretKinds(strings.join('\n'))) {
      let labels = this.found.get(kind);
      if (!labels) {
        labels = new Set();
        this.found.set(kind, labels);
      }
      labels.add(label);
    }
  }

  get kinds(): SecretKind[] {
    return [...this.found.keys()];
  }

  warnings(listMax = 10): string[] {
    const out: string[] = [];
    for (const p of PATTERNS) {
      const labels = this.found.get(p.kind);
      if (!labels) continue;
      const all = [...labels].map(printable);
      const shown = all.slice(0, listMax).join(', ');
      const more = all.length > listMax ? `, … (+${all.length - listMax} more)` : '';
      const what = p.kind === 'local_path' ? 'what looks like a' : 'what looks like a secret:';
      out.push(
        `report data contains ${what} ${SECRET_LABELS[p.kind]} in ${all.length} test${all.length === 1 ? '' : 's'}: ${shown}${more} — review before publishing`,
      );
    }
    return out;
  }
}
