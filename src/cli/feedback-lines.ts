import type { FeedbackNote } from '../merge/index.js';
import { dim } from './format.js';

/** Reviewers' notes under a case: `feedback <reviewer> (<date>): <text>`, continuation lines indented. */
export function feedbackLines(notes: FeedbackNote[], indent: string): string[] {
  const lines: string[] = [];
  for (const n of notes) {
    const [first, ...rest] = n.feedback.split('\n');
    lines.push(`${indent}feedback    ${n.reviewer} ${dim(`(${n.updated_at.slice(0, 10)})`)}: ${first}`);
    for (const l of rest) lines.push(`${indent}            ${l}`);
  }
  return lines;
}
