/**
 * The CI check (`agentv-results gate`) as one verb: the two runs named as a user names them (a path,
 * a published run id, `@<tag>`, `@latest`), one fetch for both, the verdict of `gateRuns`, a first
 * run that has no baseline yet (`missingBaseline: 'pass'`), the webhook told when the gate fails or
 * cannot decide, and, when it passes, the `baseline` tag moved to the candidate. The CLI prints what
 * this returns; a program gets the same answer.
 *
 *   resolve candidate -> resolve baseline (absent: pass or fail) -> the baseline line's history
 *   (./gate-history.ts) -> gateRuns -> onVerdict
 *   -> webhook (failed) -> move the baseline tag (passed) -> dispose the scratch copies
 */
import * as z from 'zod';
import { GateRuleFields, gateRuns, type GateReport } from './gate.js';
import { readGateHistory } from './gate-history.js';
import { gateErrorEvent, gateFailedEvent } from './gate-event.js';
import { moveTag, type MoveTagResult } from '../overlay-write/move-tag.js';
import { resolveRunNames, type FetchOnce, type ResolvedRun, type ResolvedRuns } from '../branch-read/run-names.js';
import type { PublishTarget } from '../repo/target.js';
import { ReadError } from '../errors/read-errors.js';
import { InputError } from '../errors/input-error.js';
import { ciContext } from '../util/ci-context.js';
import { exitCodeFor } from '../errors/errors.js';
import { flag, fnOf, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import { notifyWebhook, webhookFrom, type Webhook, type WebhookEvent } from '../util/webhook.js';

/**
 * `gateCheck`'s options, parsed once at its door: the `gate` command's flags come from the same
 * fields (in this order), and the gate's rule (GateRuleFields, with its defaults) is handed on to
 * `gateRuns` as parsed.
 */
export const GateCheckOptionsSchema = z.strictObject({
  /** Fetch the results branch before reading published runs (once for both names). */
  fetch: z
    .boolean()
    .default(false)
    .meta(flag('--fetch', 'Fetch the results branch before reading published runs (without it, only when a run is not found locally)')),
  ...TargetFields,
  /** @internal A repository already resolved by the caller (repo/target.ts): used as it is. */
  resolved: objectOf<PublishTarget>().optional(),
  /** Each a run directory or results file, a published run id, `@<tag>` or `@latest[:experiment=<e>]`. */
  baseline: z.string(),
  candidate: z.string(),
  ...GateRuleFields,
  /** The baseline names no published run (a first run): fail (the not-found error) or pass. */
  missingBaseline: z
    .enum(['fail', 'pass'])
    .default('fail')
    .meta(flag('--missing-baseline <policy>', 'When the baseline names no run (a first run, before any is tagged): fail (default, exit 2) or pass')),
  /** When the gate passes, move the `baseline` tag to the candidate (a published run). */
  updateBaseline: z
    .boolean()
    .default(false)
    .meta(flag('--update-baseline', 'When the gate passes, move the `baseline` tag to the candidate (a published run): tag writes, pushed, never forced')),
  /** With updateBaseline: push the tag move. */
  push: z.boolean().default(true).meta(flag('--no-push', 'With --update-baseline: commit the tag move locally only')),
  /** Where to POST the gate's event (default: AGENTV_RESULTS_WEBHOOK_URL in `env`). */
  webhook: z
    .string()
    .optional()
    .meta(flag('--webhook <url>', 'POST a JSON event when the gate fails (default: AGENTV_RESULTS_WEBHOOK_URL); the URL is never printed')),
  /** The verdict is known (before the webhook and the tag move, either of which may fail). */
  onVerdict: fnOf<(verdict: GateVerdict) => void | Promise<void>>().optional(),
  /** The baseline tag is being moved (a step that talks to the remote). */
  onStep: fnOf<(step: string) => void>().optional(),
  /** Something the caller should see that does not change the verdict (a webhook not delivered). */
  onWarning: fnOf<(text: string) => void>().optional(),
});

/** What a caller passes to `gateCheck`. */
export type GateCheckOptions = z.input<typeof GateCheckOptionsSchema>;
type GateCheckParsed = z.output<typeof GateCheckOptionsSchema>;

/** What the gate decided: a verdict over two runs, or a pass because there was no baseline yet. */
export type GateVerdict =
  | {
      kind: 'gated';
      report: GateReport;
      baseline: ResolvedRun;
      candidate: ResolvedRun;
      /** The report's warnings (a published run named by its run id, as the reader named it). */
      warnings: string[];
    }
  | {
      kind: 'no-baseline';
      /** One line for people: why the gate passed. */
      note: string;
      candidate: ResolvedRun;
      /** The candidate is tagged baseline by this gate (`updateBaseline` with a published run). */
      becomesBaseline: boolean;
    };

export interface GateCheckResult {
  verdict: GateVerdict;
  passed: boolean;
  /** The webhook's delivery of a failed gate (null: none was sent). */
  webhook: { ok: true; status: number } | { ok: false; error: string } | null;
  /** The baseline tag's move (null: not asked, or the gate failed, or the candidate is a local path). */
  moved: MoveTagResult | null;
}

/** The CI gate as `agentv-results gate` runs it: names both runs, gates the candidate against the baseline, then the webhook and the baseline tag's move. */
export async function gateCheck(options: GateCheckOptions): Promise<GateCheckResult> {
  const opts = parseOptions('gateCheck', GateCheckOptionsSchema, options);
  // The webhook is read first: a gate that cannot decide still notifies (gate-error).
  const webhook = webhookFrom(opts.webhook, opts.env ?? process.env);
  try {
    return await decideAndAct(opts, webhook);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (webhook)
      await notify(
        webhook,
        gateErrorEvent({ message, exit_code: exitCodeFor(err) }, { baseline: opts.baseline, candidate: opts.candidate }, ciContext()),
        opts,
      );
    throw err;
  }
}

async function notify(webhook: Webhook, event: WebhookEvent, opts: GateCheckParsed): Promise<GateCheckResult['webhook']> {
  const sent = await notifyWebhook(webhook, event);
  if (!sent.ok) opts.onWarning?.(`webhook not delivered: ${sent.error}`);
  return sent;
}

async function decideAndAct(opts: GateCheckParsed, webhook: Webhook | null): Promise<GateCheckResult> {
  const { baseline, candidate, fetch, cwd, env, remote, configFile, project, overrides, resolved } = opts;
  // The candidate and the baseline resolve in two calls (a missing baseline may pass): one fetch for both.
  const once: FetchOnce = { wanted: fetch, done: false };
  const names = { cwd, env, remote, configFile, project, overrides, resolved, fetch, fetchOnce: once };
  const cands = await resolveRunNames([candidate], names);
  try {
    const cand = cands.runs[0]!;
    if (opts.updateBaseline && cand.runId === null)
      throw new InputError(`--update-baseline: ${candidate} is a local path; publish it and name it by its run id (\`publish --json\` prints it)`);
    const updateBaseline = async (): Promise<MoveTagResult | null> => {
      if (!opts.updateBaseline || cand.runId === null) return null;
      opts.onStep?.('moving the baseline tag');
      return moveTag({ cwd, env, remote, configFile, project, overrides, resolved, runId: cand.runId, tag: 'baseline', push: opts.push });
    };
    const base = await resolveRunNames([baseline], names).catch((err: unknown): ResolvedRuns | null => {
      // Only a name that is no published run (ReadError of kind not-found) lets a first run pass: a git or remote failure, or a bad name, still fails the gate.
      if (opts.missingBaseline === 'pass' && err instanceof ReadError && err.kind === 'not-found') return null;
      throw err;
    });
    if (base === null) {
      const becomesBaseline = opts.updateBaseline && cand.runId !== null;
      const note = becomesBaseline
        ? `no baseline before (${baseline} named no published run): the gate passes (--missing-baseline pass) and ${cand.runId} is now the baseline`
        : `no baseline yet (${baseline} names no published run): the gate passes (--missing-baseline pass); this run becomes the baseline when it lands on main`;
      const verdict: GateVerdict = { kind: 'no-baseline', note, candidate: cand, becomesBaseline };
      await opts.onVerdict?.(verdict);
      return { verdict, passed: true, webhook: null, moved: await updateBaseline() };
    }
    try {
      const b = base.runs[0]!;
      const history = await readGateHistory({
        cwd,
        env,
        remote,
        configFile,
        project,
        overrides,
        resolved,
        baselineRunId: b.runId,
        count: opts.history,
        targets: opts.baselineTargets ?? opts.targets,
      });
      // The rule as parsed at this door, handed on whole: gateRuns applies no default of its own to it.
      const report = await gateRuns({
        baseline: b.path,
        candidate: cand.path,
        // A published run is read from a scratch copy: every message and warning names it by its run id from the start.
        shownAs: { baseline: b.runId ?? undefined, candidate: cand.runId ?? undefined },
        cwd,
        tolerance: opts.tolerance,
        maxRegressions: opts.maxRegressions,
        confidence: opts.confidence,
        newTests: opts.newTests,
        removedTests: opts.removedTests,
        targets: opts.targets,
        baselineTargets: opts.baselineTargets,
        candidateTargets: opts.candidateTargets,
        allTargets: opts.allTargets,
        history,
      });
      const verdict: GateVerdict = { kind: 'gated', report, baseline: b, candidate: cand, warnings: report.warnings };
      await opts.onVerdict?.(verdict);
      let sent: GateCheckResult['webhook'] = null;
      if (!report.passed && webhook) {
        const run = (r: ResolvedRun) => ({ run_id: r.runId, source: r.runId ?? r.name });
        sent = await notify(webhook, gateFailedEvent(report, { baseline: run(b), candidate: run(cand) }, ciContext()), opts);
      }
      return { verdict, passed: report.passed, webhook: sent, moved: report.passed ? await updateBaseline() : null };
    } finally {
      await base.dispose();
    }
  } finally {
    await cands.dispose();
  }
}
