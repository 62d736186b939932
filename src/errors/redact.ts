/**
 * Credentials never leave through what we print. A results repository may be configured as
 * `https://user:TOKEN@host/r.git` (results.repo, AGENTV_RESULTS_REPO) and git repeats that URL in
 * its errors; every message, log line, `--json` document and outbox record that can carry a URL
 * goes through here.
 */

import { existsSync } from 'node:fs';

// scheme://userinfo@ — userinfo has no '/', whitespace, quote or '@' (the last '@' before the host wins).
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s'"@<>]*@/gi;

/** Strips credentials a URL may embed (https://user:token@host/... -> https://host/...). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

/** The same for every URL inside a free text (an error message, git's stderr, a log line). */
export function redactText(text: string): string {
  return text.includes('://') ? text.replace(URL_USERINFO, '$1') : text;
}

/** Deep copy of a JSON-like value with every string redacted (for `--json` output and records). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}

/**
 * What went wrong, from git's stderr: its `fatal:`/`error:` lines without the prefix (git's
 * advice paragraphs — "Please make sure you have the correct access rights and the repository
 * exists." — say nothing about the cause), redacted. Falls back to the last non-empty line.
 */
export function gitCause(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('hint:'));
  const key = lines.filter((l) => /^(fatal|error|remote: fatal|remote: error):/.test(l)).map((l) => l.replace(/^(remote: )?(fatal|error):\s*/, ''));
  const picked = key.length > 0 ? key.slice(0, 2).join('; ') : (lines[lines.length - 1] ?? 'unknown error');
  return redactText(picked);
}

/** Top-level directories of this machine, as found (an answer names `/api/...`, not a directory). */
const topDirs = new Map<string, boolean>();
function isLocalTop(segment: string): boolean {
  let known = topDirs.get(segment);
  if (known === undefined) {
    known = existsSync(`/${segment}`);
    // bounded: a hostile message can name many made-up tops
    if (topDirs.size < 256) topDirs.set(segment, known);
  }
  return known;
}

/**
 * `text` with every absolute path of this machine replaced by `<server path>` (and the file's name, when it
 * ends in an extension: `<server path>/iterations.jsonl`): what a server
 * answers a client (an error's message may quote a scratch file, the repository or a cache) must
 * not show where things live on the server. A path counts when its first directory exists here;
 * a URL's path, a route (`/api/...`) or a branch name (`agentv/results/v1`) is left as it is.
 */
export function hideLocalPaths(text: string): string {
  return text.replace(/(?<![\w.\-:/~])\/([^\s'"`:,;()<>[\]{}/]+)(\/[^\s'"`:,;()<>[\]{}]*)?/g, (whole, top: string, rest?: string) => {
    if (!isLocalTop(top)) return whole;
    // A file's own name stays (which file is a pipe, which is missing); where it lives does not, nor
    // a directory's name (a home directory names its user): only a last segment with an extension.
    const name = rest?.split('/').filter(Boolean).pop();
    return name && /^[^.].*\.[A-Za-z0-9]+$/.test(name) ? `<server path>/${name}` : '<server path>';
  });
}
