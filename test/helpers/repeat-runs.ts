/**
 * Real repeat runs of both AgentV lines with a scripted agent whose attempts a plan file decides.
 *
 * Two targets (`alpha`, `beta`) and three tests: `always` passes every attempt on both, `flaky`
 * passes every attempt on alpha and only the third call on beta (1 of 3 attempts), `never` fails
 * every attempt. The agent counts its calls per (target, test) under a lock: AgentV's `{ATTEMPT}`
 * placeholder is the retry index (0 for every repeat), so the plan keys on the call number. The
 * counters are cleared before each eval.
 *
 * - 5.x: `evaluate_options: {repeat: 3}` (its only strategy, `pass_any`).
 * - 4.42: `execution.trials: {count: 3, strategy}` for `pass_at_k`, `mean` and
 *   `confidence_interval` (pass_at_k stops at a test's first passing attempt).
 */
import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENTV_BIN, AGENTV_STABLE_BIN, runAgentV } from './agentv-client.js';
import { git, makeTempDir } from './git-fixtures.js';

export const STABLE_STRATEGIES = ['pass_at_k', 'mean', 'confidence_interval'] as const;
export type RepeatLine = 'agentv' | 'agentv-stable';

const AGENT = `#!/usr/bin/env bash
# Scripted agent: plan.txt lines "<target> <test> <call|*> pass"; every other call fails.
dir=$(dirname "$0"); target=$1; test=$2; out=$3
mkdir -p "$dir/calls"
n=$( ( flock 9; f="$dir/calls/$target--$test"; c=$(( $(cat "$f" 2>/dev/null || echo 0) + 1 )); echo $c > "$f"; echo $c ) 9>"$dir/calls/.lock" )
verdict=$(awk -v t="$target" -v e="$test" -v a="$n" '$1==t && $2==e && ($3==a || $3=="*") {print $4; exit}' "$dir/plan.txt")
if [ "$verdict" = pass ]; then echo "PASS answer $test call $n" > "$out"; else echo "nope $test call $n" > "$out"; fi
`;

const PLAN = 'alpha always * pass\nbeta always * pass\nalpha flaky * pass\nbeta flaky 3 pass\n';

const TESTS_5 = ['always', 'flaky', 'never']
  .map((id) => `  - id: ${id}\n    vars:\n      input: q\n    assert:\n      - type: contains\n        value: PASS\n`)
  .join('');
const TESTS_4 = ['always', 'flaky', 'never']
  .map((id) => `  - id: ${id}\n    criteria: passes\n    input: q\n    assertions:\n      - type: contains\n        value: PASS\n`)
  .join('');

/** A project for one AgentV line with the scripted agent, as a git repository with one commit. */
export async function makeRepeatProject(line: RepeatLine): Promise<string> {
  const dir = join(await makeTempDir('agentv-repeat'), 'project');
  await mkdir(join(dir, 'evals'), { recursive: true });
  await mkdir(join(dir, '.agentv'), { recursive: true });
  await writeFile(join(dir, 'agent.sh'), AGENT);
  await chmod(join(dir, 'agent.sh'), 0o755);
  await writeFile(join(dir, 'plan.txt'), PLAN);
  await writeFile(join(dir, '.gitignore'), '.agentv/results/\ncalls/\n');
  const cmd = (t: string) => `bash ${join(dir, 'agent.sh')} ${t} {EVAL_ID} {OUTPUT_FILE}`;
  if (line === 'agentv') {
    await writeFile(join(dir, '.agentv', 'config.yaml'), 'providers: file://providers.yaml\n');
    await writeFile(join(dir, '.agentv', 'providers.yaml'), ['alpha', 'beta'].map((t) => `- id: cli\n  label: ${t}\n  command: ${cmd(t)}\n`).join(''));
    await writeFile(
      join(dir, 'evals', 'rep.eval.yaml'),
      `name: rep\ndescription: repeat runs\nproviders:\n  - alpha\n  - beta\nprompts:\n  - "{{ input }}"\nevaluate_options:\n  repeat: 3\ntests:\n${TESTS_5}`,
    );
  } else {
    await writeFile(
      join(dir, '.agentv', 'targets.yaml'),
      `targets:\n${['alpha', 'beta'].map((t) => `  - name: ${t}\n    provider: cli\n    command: ${cmd(t)}\n`).join('')}`,
    );
    for (const strategy of STABLE_STRATEGIES) {
      await writeFile(
        join(dir, 'evals', `${strategy}.eval.yaml`),
        `name: rep-${strategy.replace(/_/g, '-')}\ndescription: repeat runs\nexecution:\n  targets: [alpha, beta]\n  trials:\n    count: 3\n    strategy: ${strategy}\ntests:\n${TESTS_4}`,
      );
    }
  }
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['-c', 'user.name=Sample', '-c', 'user.email=sample@example.invalid', 'commit', '-q', '-m', 'repeat project']);
  return dir;
}

async function dirsUnder(root: string): Promise<string[]> {
  try {
    return (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => join(root, e.name));
  } catch {
    return [];
  }
}

/**
 * One real eval of the project (5.x: `rep.eval.yaml`; 4.42: the strategy's eval file) as
 * experiment `<experiment>`; returns the run directory it made.
 */
export async function repeatEval(line: RepeatLine, project: string, experiment: string, strategy?: string): Promise<string> {
  await rm(join(project, 'calls'), { recursive: true, force: true });
  const root = line === 'agentv' ? join(project, '.agentv', 'results') : join(project, '.agentv', 'results', 'runs', experiment);
  const before = new Set(await dirsUnder(root));
  const file = line === 'agentv' ? 'evals/rep.eval.yaml' : `evals/${strategy ?? 'pass_at_k'}.eval.yaml`;
  const r = await runAgentV(['eval', file, '--experiment', experiment], { cwd: project, bin: line === 'agentv' ? AGENTV_BIN : AGENTV_STABLE_BIN });
  if (r.code !== 0) throw new Error(`${line} eval exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const made = (await dirsUnder(root)).filter((d) => !before.has(d) && !d.endsWith('/runs'));
  if (made.length !== 1) throw new Error(`${line} eval made ${made.length} run directories\n${r.stdout}`);
  return made[0]!;
}
