// Author/committer identities. Commits must be deterministic (ARCHITECTURE.md rule 5), so the date is
// always explicit and identities are normalized the same way whether the commit is written by
// fast-import (verbatim) or commit-tree (which trims "crud" characters itself).
import { GitArgumentError } from '../errors/git-errors.js';

export interface Ident {
  name: string;
  email: string;
  /** A Date, git's raw "<unix-seconds> <+hhmm>", or anything Date.parse understands (stored as UTC). */
  date: Date | string;
}

// git's ident.c strips these from both ends of names and emails when it builds an ident.
const isCrud = (ch: string): boolean => ch.charCodeAt(0) <= 32 || ',:;<>"\\\''.includes(ch);

function trimCrud(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isCrud(s[start] as string)) start++;
  while (end > start && isCrud(s[end - 1] as string)) end--;
  return s.slice(start, end);
}

const RAW_DATE = /^@?(\d+) ([+-]\d{4})$/;

/** git raw date "<seconds> <+hhmm>". */
export function formatGitDate(date: Date | string): string {
  if (typeof date === 'string') {
    const raw = RAW_DATE.exec(date.trim());
    if (raw) return `${raw[1]} ${raw[2]}`;
    const ms = Date.parse(date);
    if (Number.isNaN(ms)) throw new GitArgumentError(`invalid commit date ${JSON.stringify(date)}`);
    return formatGitDate(new Date(ms));
  }
  const ms = date.getTime();
  if (Number.isNaN(ms) || ms < 0) throw new GitArgumentError(`invalid commit date ${String(date)}`);
  return `${Math.floor(ms / 1000)} +0000`;
}

export interface NormalizedIdent {
  name: string;
  email: string;
  /** Raw git date. */
  date: string;
}

export function normalizeIdent(id: Ident, role: string): NormalizedIdent {
  for (const [field, value] of [
    ['name', id.name],
    ['email', id.email],
  ] as const) {
    if (typeof value !== 'string') throw new GitArgumentError(`${role} ${field} must be a string`);
    if (/[<>\n\0]/.test(value)) throw new GitArgumentError(`${role} ${field} must not contain <, >, newline or NUL: ${JSON.stringify(value)}`);
  }
  const name = trimCrud(id.name);
  if (name.length === 0) throw new GitArgumentError(`${role} name must not be empty`);
  return { name, email: trimCrud(id.email), date: formatGitDate(id.date) };
}

/** "Name <email> <seconds> <tz>" as used in commit headers and fast-import. */
export function identLine(id: NormalizedIdent): string {
  return `${id.name} <${id.email}> ${id.date}`;
}

/** Environment for commit-tree; "@" forces git to read the date as raw seconds. */
export function identEnv(author: NormalizedIdent, committer: NormalizedIdent): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: `@${author.date}`,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: `@${committer.date}`,
  };
}

/** Commit messages end with exactly the text given plus one newline, in every write path. */
export function normalizeMessage(message: string): string {
  if (message.includes('\0')) throw new GitArgumentError('commit message must not contain NUL');
  return message.endsWith('\n') ? message : `${message}\n`;
}
