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
import { DEFAULT_GATE_CONFIDENCE, DEFAULT_GATE_HISTORY, DEFAULT_GATE_TOLERANCE, gateRuns, type GateReport } from './gate.js';
import { readGateHistory } from './gate-history.js';
import { gateErrorEvent, gateFailedEvent } from './gate-event.js';
import { moveTag, type MoveTagResult } from '../overlay-write/move-tag.js';
import { namedPaths, resolveRunNames, type FetchOnce, type ResolvedRun, type ResolvedRuns } from '../branch-read/run-names.js';
import type { TargetOptions } from '../repo/target.js';
import { InputError } from '../runs/export/export.js';
import { ciContext } from '../util/ci-context.js';
import { exitCodeFor } from '../errors/errors.js';
import { checkOptions, fnOf, TargetFields } from '../options/verb-options.js';
import { notifyWebhook, webhookFrom, type Webhook, type WebhookEvent } from '../util/webhook.js';

/** `gateCheck`'s options, checked when it is called. */
export const GateCheckOptionsSchema = z.object({
  ...TargetFields,
  /** Each a run directory or results file, a published run id, `@<tag>` or `@latest[:experiment=<e>]`. */
  baseline: z.string(),
  candidate: z.string(),
  /** Fetch the results branch before reading published runs (once for both names). */
  fetch: z.boolean().optional(),
  /** A score drop of more than this regresses a test (default DEFAULT_GATE_TOLERANCE). */
  tolerance: z.number().optional(),
  /** Fail only when more than this many tests regress (default 0). */
  maxRegressions: z.number().optional(),
  /** Judge each test against the last n published runs of the baseline's experiment, up to the baseline (default DEFAULT_GATE_HISTORY; 0: today's rule). */
  history: z.number().optional(),
  /** The history rule's confidence (default DEFAULT_GATE_CONFIDENCE): an unchanged suite fails at most 1 - confidence of the time. */
  confidence: z.number().optional(),
  newTests: z.enum(['allow', 'fail']).optional(),
  removedTests: z.enum(['allow', 'fail']).optional(),
  targets: z.array(z.string()).optional(),
  baselineTargets: z.array(z.string()).optional(),
  candidateTargets: z.array(z.string()).optional(),
  allTargets: z.union([z.boolean(), z.literal('auto')]).optional(),
  /** The baseline names no published run (a first run): fail (default: the not-found error) or pass. */
  missingBaseline: z.enum(['fail', 'pass']).optional(),
  /** When the gate passes, move the `baseline` tag to the candidate (a published run). */
  updateBaseline: z.boolean().optional(),
  /** With updateBaseline: push the tag move (default true). */
  push: z.boolean().optional(),
  /** Where to POST the gate's event (default: AGENTV_RESULTS_WEBHOOK_URL in `env`). */
  webhook: z.string().optional(),
  /** The verdict is known (before the webhook and the tag move, either of which may fail). */
  onVerdict: fnOf<(verdict: GateVerdict) => void | Promise<void>>().optional(),
  /** The baseline tag is being moved (a step that talks to the remote). */
  onStep: fnOf<(step: string) => void>().optional(),
  /** Something the caller should see that does not change the verdict (a webhook not delivered). */
  onWarning: fnOf<(text: string) => void>().optional(),
});

export type GateCheckOptions = TargetOptions & Omit<z.infer<typeof GateCheckOptionsSchema>, keyof TargetOptions>;

/** What the gate decided: a verdict over two runs, or a pass because there was no baseline yet. */
export type GateVerdict =
  | {
      kind: 'gated';
      report: GateReport;
      baseline: ResolvedRun;
      candidate: ResolvedRun;
      /** The report's warnings with each published run's scratch path replaced by its run id. */
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
export async function gateCheck(opts: GateCheckOptions): Promise<GateCheckResult> {
  checkOptions('gateCheck', GateCheckOptionsSchema, opts);
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

async function notify(webhook: Webhook, event: WebhookEvent, opts: GateCheckOptions): Promise<GateCheckResult['webhook']> {
  const sent = await notifyWebhook(webhook, event);
  if (!sent.ok) opts.onWarning?.(`webhook not delivered: ${sent.error}`);
  return sent;
}

async function decideAndAct(opts: GateCheckOptions, webhook: Webhook | null): Promise<GateCheckResult> {
  const { baseline, candidate, fetch, cwd: given, env, remote, configFile, project, overrides, resolved } = opts;
  const cwd = given ?? process.cwd();
  // The candidate and the baseline resolve in two calls (a missing baseline may pass): one fetch for both.
  const once: FetchOnce = { wanted: Boolean(fetch), done: false };
  const names = { cwd, env, remote, configFile, project, overrides, resolved, fetch: Boolean(fetch), fetchOnce: once };
  const cands = await resolveRunNames([candidate], names);
  const named: ResolvedRun[] = [...cands.runs];
  try {
    const cand = cands.runs[0]!;
    if (opts.updateBaseline && cand.runId === null)
      throw new InputError(`--update-baseline: ${candidate} is a local path; publish it and name it by its run id (\`publish --json\` prints it)`);
    const updateBaseline = async (): Promise<MoveTagResult | null> => {
      if (!opts.updateBaseline || cand.runId === null) return null;
      opts.onStep?.('moving the baseline tag');
      return moveTag({ cwd, env, remote, configFile, project, overrides, resolved, runId: cand.runId, tag: 'baseline', push: opts.push !== false });
    };
    const base = await resolveRunNames([baseline], names).catch((err: unknown): ResolvedRuns | null => {
      if (opts.missingBaseline === 'pass' && (err as { code?: string }).code === 'not-found') return null;
      throw err;
    });
    if (base === null) {
      const becomesBaseline = Boolean(opts.updateBaseline) && cand.runId !== null;
      const note = becomesBaseline
        ? `no baseline before (${baseline} named no published run): the gate passes (--missing-baseline pass) and ${cand.runId} is now the baseline`
        : `no baseline yet (${baseline} names no published run): the gate passes (--missing-baseline pass); this run becomes the baseline when it lands on main`;
      const verdict: GateVerdict = { kind: 'no-baseline', note, candidate: cand, becomesBaseline };
      await opts.onVerdict?.(verdict);
      return { verdict, passed: true, webhook: null, moved: await updateBaseline() };
    }
    try {
      const b = base.runs[0]!;
      named.push(b);
      const count = opts.history ?? DEFAULT_GATE_HISTORY;
      if (!(Number.isInteger(count) && count >= 0 && count <= 1000))
        throw new InputError(`--history must be a whole number from 0 to 1000 (got ${opts.history})`);
      const history = await readGateHistory({
        cwd,
        env,
        remote,
        configFile,
        project,
        overrides,
        resolved,
        baselineRunId: b.runId,
        count,
        targets: opts.baselineTargets ?? opts.targets,
      });
      const report = await gateRuns({
        baseline: b.path,
        candidate: cand.path,
        cwd,
        tolerance: opts.tolerance ?? DEFAULT_GATE_TOLERANCE,
        maxRegressions: opts.maxRegressions ?? 0,
        newTests: opts.newTests ?? 'allow',
        removedTests: opts.removedTests ?? 'fail',
        targets: opts.targets,
        baselineTargets: opts.baselineTargets,
        candidateTargets: opts.candidateTargets,
        allTargets: opts.allTargets ?? 'auto',
        history,
        confidence: opts.confidence ?? DEFAULT_GATE_CONFIDENCE,
      });
      report.sources.baseline.source = b.runId ?? b.name;
      report.sources.candidate.source = cand.runId ?? cand.name;
      const verdict: GateVerdict = { kind: 'gated', report, baseline: b, candidate: cand, warnings: report.warnings.map((w) => namedPaths(w, [b, cand])) };
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
  } catch (err) {
    // A message about a published run names it by its id, not by its scratch copy.
    if (err instanceof Error) err.message = namedPaths(err.message, named);
    throw err;
  } finally {
    await cands.dispose();
  }
}
