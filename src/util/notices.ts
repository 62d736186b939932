/**
 * Things a verb should tell its user once, however often they happen inside it (a remote that
 * cannot serve a shallow fetch, so every fetch of the command goes in full). The library only
 * records them; whoever runs the verb decides where they go: the CLI writes each to stderr once per
 * command (cli/errors.ts `runCommand`), a library caller may set its own sink.
 */
import { fnOf, parseArgs } from '../options/verb-options.js';

/** Where a verb's notices go (the CLI: one line on stderr each). */
export type NoticeSink = (text: string) => void;

/** `setNoticeSink`'s one argument: a function, or null for nowhere. */
export const NoticeSinkArgsSchema = { sink: fnOf<NoticeSink>().nullable() };

let sink: NoticeSink | null = null;
const said = new Set<string>();

/** Where notices go from now on (null: nowhere); what was said before is forgotten (a new command). */
export function setNoticeSink(next: NoticeSink | null): void {
  sink = parseArgs('setNoticeSink', NoticeSinkArgsSchema, [next]).sink;
  said.clear();
}

/** Tells `text` once per `key` since the sink was set. */
export function notice(key: string, text: string): void {
  if (said.has(key)) return;
  said.add(key);
  sink?.(text);
}
