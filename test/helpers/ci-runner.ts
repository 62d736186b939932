/**
 * A simulated CI runner for the recipes in examples/ci/: each job gets a fresh shallow clone, an
 * environment with no git identity (an empty HOME, `user.useConfigOnly`), the platform's CI
 * variables and files, and runs the recipe's shell steps as written, in order, with bash. Only what
 * the platforms do around the shell is simulated: `actions/checkout` is a clone, artifacts are
 * copied between jobs, `if:`/`rules:` and `${{ … }}` are evaluated for the few forms the recipes
 * use (anything else throws, so a recipe cannot quietly use what this runner does not know).
 *
 * Programs on PATH: the built CLI as `agentv-results` (and `npx agentv-results@<version>`); `npm
 * install --global` is a no-op that refuses an unpinned agentv-results (a version or a git URL at a
 * ref); `npm ci` in the action's own checkout is a no-op (the suite runs the built tree, which the
 * action's wrapper then runs with node); `npx agentv@<version> eval` is a stand-in eval
 * (test/helpers/fake-agentv.mjs) writing the run workspace of that AgentV line — 4.x: AgentV 4.42's
 * `runs/<experiment>/<timestamp>/`, 5.x: AgentV 5's with its index in `.internal/` — with the scores
 * the test chose; `gh api` serves the pull-request comments from a JSON file
 * (test/helpers/fake-gh.mjs). git, bash and curl are the real ones, node too (through a shim that
 * can crash the gate on demand).
 *
 * `actions/upload-artifact@v4` keeps what the real one keeps: entries whose names start with a dot
 * are dropped unless `include-hidden-files: true`. This project's own action (`uses:
 * <owner>/agentv-results@<ref>`) runs from action.yml at the repository root, as a composite action:
 * its inputs (with defaults), its bash steps, its outputs.
 */
import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parse } from 'yaml';
import { CLI_PATH } from './cli.js';
import { REPO_ROOT } from './fixtures.js';

export interface StepRun {
  job: string;
  step: string;
  code: number;
  stdout: string;
  stderr: string;
  /** A `uses:` of this project's action: the action's outputs. */
  outputs?: Record<string, string>;
}

export interface JobResult {
  job: string;
  ok: boolean;
  steps: StepRun[];
}

/** The programs the recipes call, as scripts in a directory to put first on PATH. */
export async function makeShims(dir: string): Promise<string> {
  const bin = join(dir, 'bin');
  // A crash of the tool itself, on demand: with $FAKE_CRASH_GATE set, `agentv-results gate` starts in a
  // working directory that no longer exists, a system error the CLI does not expect (exit 70).
  await mkdir(bin, { recursive: true });
  const write = async (name: string, text: string) => {
    await writeFile(join(bin, name), text);
    await chmod(join(bin, name), 0o755);
  };
  const crash = `if [ -n "$FAKE_CRASH_GATE" ] && [ "$1" = gate ]; then\n  gone=$(mktemp -d) && cd "$gone" && rmdir "$gone"\nfi\n`;
  await write('agentv-results', `#!/bin/sh\n${crash}exec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
  // The action installs agentv-results from its own checkout and runs it with node: the same crash on demand there.
  await write(
    'node',
    `#!/bin/sh\ncase "$1" in */dist/cli/main.js) if [ -n "$FAKE_CRASH_GATE" ] && [ "$2" = gate ]; then\n  gone=$(mktemp -d) && cd "$gone" && rmdir "$gone"\nfi ;; esac\nexec "${process.execPath}" "$@"\n`,
  );
  // The recipes pin what they install: agentv-results@<version>, or a git URL at a ref (#<tag or commit>);
  // anything unpinned fails here. npm ci in the action's own checkout is the suite's built tree (no-op).
  await write(
    'npm',
    `#!/bin/sh\nif [ "$1" = install ]; then\n  for a in "$@"; do case "$a" in agentv-results|git+*|github:*) case "$a" in *#?*) ;; *) echo "npm: agentv-results must be pinned (agentv-results@<version> or <git URL>#<ref>)" >&2; exit 1 ;; esac ;; esac; done\n  exit 0\nfi\nif [ "$1" = ci ] && [ "$(pwd -P)" = "$(cd "${REPO_ROOT}" && pwd -P)" ]; then exit 0; fi\necho "npm $* is not simulated" >&2; exit 1\n`,
  );
  // npx agentv@<version>: 4.x writes AgentV 4.42's layout, 5.x and @next AgentV 5's; a bare agentv is what npm resolves today, 4.42.4.
  await write(
    'npx',
    `#!/bin/sh\n[ "$1" = --yes ] && shift\ncase "$1" in agentv-results@?*) shift; exec "${process.execPath}" "${CLI_PATH}" "$@" ;; esac\ncase "$1" in\n  agentv|agentv@4.*) FAKE_AGENTV_LINE=4.42 ;;\n  agentv@5.*|agentv@next) FAKE_AGENTV_LINE=5 ;;\n  *) echo "npx $* is not simulated" >&2; exit 1 ;;\nesac\nexport FAKE_AGENTV_LINE\nshift\nexec "${process.execPath}" "${join(REPO_ROOT, 'test/helpers/fake-agentv.mjs')}" "$@"\n`,
  );
  await write('gh', `#!/bin/sh\nexec "${process.execPath}" "${join(REPO_ROOT, 'test/helpers/fake-gh.mjs')}" "$@"\n`);
  return bin;
}

/** The environment of a fresh runner: no git identity, no user configuration. */
export async function runnerEnv(home: string, bin: string, extra: Record<string, string>): Promise<Record<string, string>> {
  await mkdir(home, { recursive: true });
  return {
    PATH: `${bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'user.useConfigOnly',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_TERMINAL_PROMPT: '0',
    NO_COLOR: '1',
    CI: 'true',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

export function runBash(
  script: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

async function copyArtifact(from: string, to: string, hidden = true): Promise<void> {
  await mkdir(to, { recursive: true });
  // upload-artifact@v4 (since v4.4) skips files and folders whose names start with a dot unless include-hidden-files.
  if (existsSync(from)) await cp(from, to, { recursive: true, filter: (src) => hidden || !basename(src).startsWith('.') || src === from });
}

// ---------------------------------------------------------------------------------------------
// GitHub Actions

type GhStep = {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
};
type GhAction = {
  inputs?: Record<string, { default?: string; required?: boolean }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: GhStep[] };
};

/** This project's action, as a workflow names it. */
const OWN_ACTION = /^[\w.-]+\/agentv-results@[\w.-]+$/;
const ACTION_FILE = join(REPO_ROOT, 'action.yml');
type GhJob = { needs?: string | string[]; strategy?: { matrix?: Record<string, unknown[]> }; steps: GhStep[] };

export interface GithubEvent {
  name: 'push' | 'pull_request';
  pr?: number;
  /** git URL the checkout clones. */
  cloneUrl: string;
  /** The branch pushed to (default main) or the pull request's head branch. */
  branch?: string;
}

/** Runs the workflow's jobs in `needs` order (a matrix's instances side by side); a job whose needs failed is skipped. */
export async function runGithubWorkflow(file: string, event: GithubEvent, root: string, bin: string, extraEnv: Record<string, string>): Promise<JobResult[]> {
  const wf = parse(await readFile(file, 'utf8')) as { jobs: Record<string, GhJob> };
  const artifacts = join(root, 'artifacts');
  const done = new Map<string, boolean>();
  const results: JobResult[] = [];
  const order = Object.keys(wf.jobs);
  for (const name of order) {
    const job = wf.jobs[name]!;
    const needs = job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs : [job.needs];
    if (needs.some((n) => done.get(n) !== true)) {
      done.set(name, false);
      results.push({ job: name, ok: false, steps: [] });
      continue;
    }
    const matrix = job.strategy?.matrix ?? {};
    const keys = Object.keys(matrix);
    const combos: Record<string, string>[] = keys.length === 0 ? [{}] : (matrix[keys[0]!] ?? []).map((v) => ({ [keys[0]!]: String(v) }));
    if (keys.length > 1) throw new Error('the simulated runner handles a one-dimensional matrix');
    // A matrix's instances run side by side, as on GitHub's runners.
    const ran = await Promise.all(
      combos.map((m, i) => runGithubJob(`${name}${keys.length > 0 ? `-${i}` : ''}`, job, m, event, join(root, `${name}-${i}`), artifacts, bin, extraEnv)),
    );
    results.push(...ran);
    done.set(
      name,
      ran.every((r) => r.ok),
    );
  }
  return results;
}

async function runGithubJob(
  label: string,
  job: GhJob,
  matrix: Record<string, string>,
  event: GithubEvent,
  dir: string,
  artifacts: string,
  bin: string,
  extraEnv: Record<string, string>,
): Promise<JobResult> {
  const work = join(dir, 'work');
  const files = join(dir, 'runner');
  await mkdir(files, { recursive: true });
  const summary = join(files, 'step-summary.md');
  const envFile = join(files, 'env');
  const outputFile = join(files, 'output');
  await writeFile(summary, '');
  const outputs: Record<string, Record<string, string>> = {};
  const jobEnv: Record<string, string> = {};
  const branch = event.branch ?? (event.name === 'push' ? 'main' : 'feature');
  const base = await runnerEnv(join(dir, 'home'), bin, {
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: event.name,
    GITHUB_REPOSITORY: 'acme/evals',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '4242',
    GITHUB_SHA: 'c0ffee'.padEnd(40, '0'),
    GITHUB_REF: event.name === 'pull_request' ? `refs/pull/${event.pr}/merge` : `refs/heads/${branch}`,
    GITHUB_REF_NAME: event.name === 'pull_request' ? `${event.pr}/merge` : branch,
    ...(event.name === 'pull_request' ? { GITHUB_HEAD_REF: branch } : {}),
    GITHUB_WORKSPACE: work,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_ENV: envFile,
    GITHUB_OUTPUT: outputFile,
    RUNNER_TEMP: files,
    ...extraEnv,
  });
  const expr = (text: string, inputs: Record<string, string> = {}, scope = outputs): string =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, e: string) => {
      if (e.startsWith('matrix.') && e.slice(7) in matrix) return matrix[e.slice(7)]!;
      if (e.startsWith('inputs.') && e.slice(7) in inputs) return inputs[e.slice(7)]!;
      if (e === 'github.event_name') return event.name;
      if (e === 'github.ref_name') return base.GITHUB_REF_NAME!;
      if (e === 'github.token') return 'simulated-token';
      if (e === 'github.event.pull_request.number') return String(event.pr ?? '');
      const step = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(e);
      if (step) return scope[step[1]!]?.[step[2]!] ?? '';
      throw new Error(`the simulated runner does not know the expression ${e}`);
    });
  const condition = (cond: string | undefined): boolean => {
    if (cond === undefined) return true;
    const m = /^github\.event_name == '(\w+)'$/.exec(cond.trim());
    if (!m) throw new Error(`the simulated runner does not know the condition ${cond}`);
    return event.name === m[1];
  };
  /** A bash step: its env evaluated, $GITHUB_ENV and $GITHUB_OUTPUT read back after it. */
  const runStep = async (
    step: GhStep,
    scope: Record<string, Record<string, string>>,
    evaluate: (t: string) => string,
    extra: Record<string, string> = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> => {
    const env = { ...base, ...jobEnv, ...extra };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = evaluate(String(v));
    await writeFile(outputFile, '');
    const r = await runBash(evaluate(step.run!), work, env);
    for (const line of (existsSync(envFile) ? await readFile(envFile, 'utf8') : '').split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) jobEnv[line.slice(0, i)] = line.slice(i + 1);
    }
    if (step.id) {
      const values: Record<string, string> = {};
      for (const line of (await readFile(outputFile, 'utf8')).split('\n')) {
        const i = line.indexOf('=');
        if (i > 0) values[line.slice(0, i)] = line.slice(i + 1);
      }
      scope[step.id] = values;
    }
    return r;
  };
  const steps: StepRun[] = [];
  for (const step of job.steps) {
    const name = step.name ?? step.uses ?? step.run ?? '';
    if (!condition(step.if)) continue;
    let r: { code: number; stdout: string; stderr: string; outputs?: Record<string, string> };
    if (step.uses?.startsWith('actions/checkout@')) {
      r = await runBash(`git clone -q --depth 1 --no-tags "$URL" "$WORK"`, dir, { ...base, URL: event.cloneUrl, WORK: work });
    } else if (step.uses?.startsWith('actions/setup-node@')) {
      r = { code: 0, stdout: '', stderr: '' };
    } else if (step.uses?.startsWith('actions/upload-artifact@')) {
      const hidden = step.with?.['include-hidden-files'] === true || step.with?.['include-hidden-files'] === 'true';
      await copyArtifact(join(work, String(step.with?.path)), join(artifacts, expr(String(step.with?.name))), hidden);
      r = { code: 0, stdout: '', stderr: '' };
    } else if (step.uses?.startsWith('actions/download-artifact@')) {
      const pattern = new RegExp(`^${String(step.with?.pattern).replace(/\*/g, '.*')}$`);
      for (const a of existsSync(artifacts) ? await readdir(artifacts) : [])
        if (pattern.test(a)) await copyArtifact(join(artifacts, a), join(work, String(step.with?.path), a));
      r = { code: 0, stdout: '', stderr: '' };
    } else if (step.run !== undefined) {
      r = await runStep(step, outputs, (t) => expr(t));
    } else if (step.uses !== undefined && OWN_ACTION.test(step.uses)) {
      // A composite action: its inputs (given or default), its steps in their own scope, its outputs.
      const action = parse(await readFile(ACTION_FILE, 'utf8')) as GhAction;
      if (action.runs.using !== 'composite') throw new Error('the simulated runner runs composite actions only');
      const inputs: Record<string, string> = {};
      for (const [k, v] of Object.entries(action.inputs ?? {})) {
        const given = step.with?.[k];
        if (given === undefined && v.required) throw new Error(`the action's input ${k} is required`);
        inputs[k] = given !== undefined ? expr(String(given)) : expr(String(v.default ?? ''));
      }
      const inner: Record<string, Record<string, string>> = {};
      r = { code: 0, stdout: '', stderr: '' };
      for (const s of action.runs.steps) {
        if (s.run === undefined || s.shell !== 'bash' || s.if !== undefined) throw new Error('the simulated runner runs bash steps of an action, without if:');
        const one = await runStep(s, inner, (t) => expr(t, inputs, inner), { GITHUB_ACTION_PATH: REPO_ROOT });
        r = { code: one.code, stdout: r.stdout + one.stdout, stderr: r.stderr + one.stderr };
        if (one.code !== 0) break;
      }
      const values = Object.fromEntries(Object.entries(action.outputs ?? {}).map(([k, v]) => [k, expr(v.value, inputs, inner)]));
      if (step.id) outputs[step.id] = values;
      r = { ...r, outputs: values };
    } else {
      throw new Error(`the simulated runner does not know the step ${name}`);
    }
    steps.push({ job: label, step: name, ...r });
    if (r.code !== 0) return { job: label, ok: false, steps };
  }
  return { job: label, ok: true, steps };
}

// ---------------------------------------------------------------------------------------------
// GitLab CI

type GlJob = { stage: string; parallel?: number; rules?: { if: string }[]; script: string[]; artifacts?: { paths?: string[] } };

/** `$A == "x"` and `$A == $B` (the forms the recipe's rules use); a rule list passes when one rule does. */
function gitlabRule(cond: string, env: Record<string, string>): boolean {
  const m = /^\$(\w+) == (?:"([^"]*)"|\$(\w+))$/.exec(cond.trim());
  if (!m) throw new Error(`the simulated runner does not know the rule ${cond}`);
  const left = env[m[1]!];
  const right = m[2] ?? env[m[3]!];
  return left !== undefined && right !== undefined && left === right;
}

/** Runs the pipeline stage by stage; artifacts of a stage's jobs are unpacked into the next stages' clones. */
export async function runGitlabPipeline(file: string, root: string, bin: string, ciEnv: Record<string, string>, cloneUrl: string): Promise<JobResult[]> {
  const doc = parse(await readFile(file, 'utf8')) as Record<string, unknown> & { stages: string[]; variables?: Record<string, string> };
  const vars = { ...(doc.variables ?? {}) };
  const jobs = Object.entries(doc).filter(([k, v]) => !['stages', 'default', 'variables'].includes(k) && typeof v === 'object') as [string, GlJob][];
  const saved: string[] = []; // artifact directories, in order
  const results: JobResult[] = [];
  for (const stage of doc.stages) {
    // A stage's jobs, and a `parallel:` job's instances, run side by side, as on GitLab's runners;
    // their results and artifacts are kept in the recipe's order.
    const instances = jobs
      .filter(([, j]) => j.stage === stage)
      .flatMap(([name, job]) => Array.from({ length: job.parallel ?? 1 }, (_, k) => ({ name, job, i: k + 1, of: job.parallel ?? 1 })));
    const ran = await Promise.all(
      instances.map(async ({ name, job, i, of }) => {
        const label = of > 1 ? `${name} ${i}/${of}` : name;
        const dir = join(root, `${name}-${i}`);
        const work = join(dir, 'work');
        const env = await runnerEnv(join(dir, 'home'), bin, {
          GITLAB_CI: 'true',
          ...vars,
          ...ciEnv,
          ...(of > 1 ? { CI_NODE_INDEX: String(i), CI_NODE_TOTAL: String(of) } : {}),
        });
        if (job.rules && !job.rules.some((r) => gitlabRule(r.if, env))) return null;
        const clone = await runBash(`git clone -q --depth "$GIT_DEPTH" --no-tags "$URL" "$WORK"`, dir, { ...env, URL: cloneUrl, WORK: work });
        if (clone.code !== 0) throw new Error(`clone failed: ${clone.stderr}`);
        for (const a of saved) await cp(a, work, { recursive: true });
        // The runner's shell: one bash session for the whole script, stopping at the first failing line.
        const r = await runBash(job.script.join('\n'), work, env);
        let kept: string | null = null;
        if (job.artifacts?.paths) {
          kept = join(dir, 'artifacts');
          await mkdir(kept, { recursive: true });
          for (const p of job.artifacts.paths) if (existsSync(join(work, p))) await cp(join(work, p), join(kept, p), { recursive: true });
        }
        return { result: { job: label, ok: r.code === 0, steps: [{ job: label, step: 'script', ...r }] }, kept };
      }),
    );
    let stageOk = true;
    for (const one of ran) {
      if (one === null) continue;
      results.push(one.result);
      stageOk &&= one.result.ok;
      if (one.kept) saved.push(one.kept);
    }
    if (!stageOk) break;
  }
  return results;
}
