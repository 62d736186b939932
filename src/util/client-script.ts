/**
 * The two pages' scripts — the Dashboard's (src/serve/client/) and the report's
 * (src/report/client/) — are TypeScript, type-checked with the DOM library by
 * tsconfig.client.json and linted like the rest, and bundled by esbuild into one IIFE each, which
 * the page inlines and pins by hash in its CSP.
 *
 * The build (scripts/bundle-clients.mjs) compiles them once and replaces this module in dist/ with
 * one that returns the compiled texts, so the installed package never loads esbuild. Run from
 * source (the tests), this module compiles a client on first use with the same options.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Each client's entry, relative to this module, and esbuild's options (the build script reads both from here). */
export const CLIENT_ENTRIES = { dashboard: '../serve/client/main.ts', report: '../report/client/main.ts' } as const;
export const CLIENT_BUILD = { bundle: true, format: 'iife', target: 'es2020', minify: true, legalComments: 'none', charset: 'utf8' } as const;

export type ClientName = keyof typeof CLIENT_ENTRIES;

const compiled = new Map<ClientName, string>();

export function clientScript(name: ClientName): string {
  let text = compiled.get(name);
  if (text === undefined) {
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    const out = esbuild.buildSync({ ...CLIENT_BUILD, entryPoints: [fileURLToPath(new URL(CLIENT_ENTRIES[name], import.meta.url))], write: false });
    text = out.outputFiles[0]!.text.trim();
    compiled.set(name, text);
  }
  return text;
}
