import { layoutName } from '../layout/layout-choice.js';
import { status, type StatusReport } from '../status/status-sections.js';
import type { Cli } from './program.js';
import { runReadCommand } from './list.js';
import { FOUND_HERE } from './flags.js';
import { StatusOptionsSchema } from '../status/status.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { bold, dim, green, printJson, red, yellow } from './format.js';
import { progressReporter } from './progress.js';
import { describeAge } from '../repo/remote-seen.js';

const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '—');

function stateText(b: StatusReport['branches'][number]): string {
  switch (b.state) {
    case 'in-sync':
      return green('in sync');
    case 'ahead':
      return yellow(`ahead ${b.ahead}`);
    case 'behind':
      return yellow(`behind ${b.behind}`);
    case 'diverged':
      return red(`diverged (ahead ${b.ahead}, behind ${b.behind})`);
    case 'local-only':
      return yellow('local only');
    case 'remote-only':
      return yellow('remote only');
    default:
      return dim('missing');
  }
}

/**
 * Renders any JSON-like value as indented "key: value" lines, so a section registered by another
 * feature shows up readably without this file knowing its shape.
 */
export function renderValue(value: unknown, indent = '  '): string[] {
  if (value === null || value === undefined) return [`${indent}—`];
  if (typeof value !== 'object') return [`${indent}${String(value)}`];
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${indent}(none)`];
    return value.flatMap((item) => {
      if (item !== null && typeof item === 'object') {
        const lines = renderValue(item, `${indent}  `);
        return [`${indent}- ${lines[0]!.trimStart()}`, ...lines.slice(1)];
      }
      return [`${indent}- ${String(item)}`];
    });
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return [`${indent}(empty)`];
  return entries.flatMap(([k, v]) => {
    if (v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0))
      return [`${indent}${k}:`, ...renderValue(v, `${indent}  `)];
    return [`${indent}${k}: ${renderValue(v, '')[0]}`];
  });
}

export function renderStatus(report: StatusReport): string {
  const lines: string[] = [];
  lines.push(`${bold('repository')}  ${report.repo}${report.managed ? dim(' (managed clone)') : ''}`);
  if (report.project) lines.push(`${bold('project')}     ${report.project}`);
  lines.push(
    `${bold('remote')}      ${report.remote ? `${report.remote}${report.remoteUrl ? dim(` (${report.remoteUrl})`) : ''}` : yellow('none — runs are committed locally only')}`,
  );
  const width = Math.max(...report.branches.map((b) => b.name.length));
  for (const b of report.branches) {
    lines.push(`  ${b.name.padEnd(width)}  ${stateText(b)}  ${dim(`local ${short(b.local)}  remote ${short(b.remote)}`)}`);
  }
  if (report.layout) lines.push(`${bold('layout')}      ${layoutName(report.layout.layout)} ${dim(`— ${report.layout.reason}`)}`);
  for (const d of report.duplicates ?? [])
    lines.push(
      `${bold('duplicate')}   run ${d.experiment} ${d.id} is held twice: ${d.rootPath} and ${d.stablePath} ${dim('— `agentv-results sync` keeps one')}`,
    );
  if (report.fetch && !report.fetch.ok) lines.push(yellow(`fetch failed: ${report.fetch.message}`));
  else if (report.fetch?.ok && report.fetch.missing.length > 0) lines.push(dim(`the remote does not have ${report.fetch.missing.join(', ')}`));
  else if (!report.fetch && report.remote)
    lines.push(
      dim(
        report.remoteSeenAt
          ? `(the remote side as of the last fetch or push, ${describeAge(new Date(report.remoteSeenAt))}; --fetch to refresh)`
          : '(the remote side as of the last fetch or push; none by agentv-results is recorded here; --fetch to refresh)',
      ),
    );
  if (report.listing?.warning) lines.push(yellow(`warning: ${report.listing.warning}`));
  if (report.pending) {
    const commits = report.branches.reduce((n, b) => n + (b.state === 'local-only' ? 0 : b.ahead), 0);
    const what = report.branches.some((b) => b.state === 'local-only')
      ? 'branches that are not on the remote yet'
      : `${commits} commit${commits === 1 ? '' : 's'}`;
    lines.push(yellow(`pending: ${what} waiting to be pushed — the next \`publish --push\` or \`agentv-results sync\` pushes them`));
  } else if (report.remote) {
    lines.push(green('nothing pending'));
  }
  if (report.branches.some((b) => b.state === 'behind' || b.state === 'diverged' || b.state === 'remote-only')) {
    lines.push(dim('the remote has runs this machine has not merged (`agentv-results list` shows them; `pull <run_id>` reads one)'));
  }
  for (const [name, value] of Object.entries(report.extra)) {
    lines.push(bold(name));
    lines.push(...renderValue(value));
  }
  return lines.join('\n') + '\n';
}

export function registerStatus(cli: Cli): void {
  schemaFlags(
    cli.command('status', 'Local results and artifacts branches against the remote: ahead/behind/diverged, and what is pending a push'),
    StatusOptionsSchema,
    { help: FOUND_HERE },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results status --fetch')
    .action((flags: Record<string, unknown>) =>
      runReadCommand(async () => {
        const progress = progressReporter(flags.fetch ? 'fetching' : 'reading', { quiet: Boolean(flags.json) });
        const report = await status(optionsFromFlags(StatusOptionsSchema, flags)).finally(progress.done);
        if (flags.json) printJson(report);
        else process.stdout.write(renderStatus(report));
        // What is shown is still correct as of the last fetch, but the refresh asked for failed.
        if (report.fetch && !report.fetch.ok) {
          if (flags.json) process.stderr.write(`agentv-results: ${report.fetch.message}\n`);
          return 3;
        }
        return 0;
      }),
    );
}
