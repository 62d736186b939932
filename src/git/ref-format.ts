/**
 * git's ref-name rules (`git check-ref-format`), in TypeScript so a setting can be checked where it
 * is read, without a process. A branch name `b` is valid when `refs/heads/b` is:
 *   - no component starts with "." or ends with ".lock", and none is empty ("//", a leading or
 *     trailing "/");
 *   - no "..", no "@{", not the single character "@";
 *   - no control character, space, "~", "^", ":", "?", "*", "[" or "\";
 *   - it does not end with ".".
 */

const FORBIDDEN = /[\x00-\x20\x7f~^:?*[\\]/;

/** Why `name` is not a valid git branch name (one short clause), or null when git would take it. */
export function branchNameProblem(name: string): string | null {
  if (name === '') return 'it is empty';
  if (name === '@') return 'it is the single character "@"';
  if (name.startsWith('-')) return 'it starts with "-" (git would read it as an option)';
  const bad = FORBIDDEN.exec(name);
  if (bad) return `it contains ${bad[0] <= ' ' || bad[0] === '\x7f' ? 'a space or control character' : JSON.stringify(bad[0])}`;
  if (name.includes('..')) return 'it contains ".."';
  if (name.includes('@{')) return 'it contains "@{"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it has an empty path component (a leading, trailing or doubled "/")';
  if (name.endsWith('.')) return 'it ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `its component ${JSON.stringify(part)} starts with "."`;
    if (part.endsWith('.lock')) return `its component ${JSON.stringify(part)} ends with ".lock"`;
  }
  return null;
}

/** Why `name` cannot be a remote's name in `refs/remotes/<name>/…`, or null. */
export function remoteNameProblem(name: string): string | null {
  if (name.includes('/')) return 'it contains "/"';
  return branchNameProblem(name);
}
