#!/usr/bin/env node
/**
 * The quick start: the whole loop on the bundled example, in a throwaway directory.
 *
 *   1. a local bare "remote" (refusing non-fast-forward pushes, like a protected server) and a
 *      project checkout with a commit, a staged file and an uncommitted edit;
 *   2. export the example results into a run workspace;
 *   3. publish it to agentv/results/v1 + agentv/artifacts/v1 and push;
 *   4. list and status from the results branch, and an HTML report.
 *
 * Run with `npm run quickstart` (builds first). Nothing outside the printed temp directory is
 * written. It uses only what the package ships: the `agentv-results` command (its `bin`) and git.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist/cli/main.js');
const example = join(root, 'examples/results/demo-agent.jsonl');

// A throwaway identity for the throwaway repository (CI machines often have none configured).
const identity = {
  GIT_AUTHOR_NAME: 'Quickstart',
  GIT_AUTHOR_EMAIL: 'quickstart@example.invalid',
  GIT_COMMITTER_NAME: 'Quickstart',
  GIT_COMMITTER_EMAIL: 'quickstart@example.invalid',
};
Object.assign(process.env, identity);

function git(args, cwd) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: process.env });
  if (r.status !== 0) {
    process.stderr.write(`quickstart: \`git ${args.join(' ')}\` exited ${r.status}\n${r.stderr}`);
    process.exit(r.status ?? 1);
  }
  return r.stdout;
}

function step(title) {
  process.stdout.write(`\n\u001b[1m== ${title}\u001b[0m\n`);
}

function agentv(args, cwd) {
  process.stdout.write(`$ agentv-results ${args.join(' ')}\n`);
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    process.stderr.write(`quickstart: \`agentv-results ${args.join(' ')}\` exited ${r.status}\n`);
    process.exit(r.status ?? 1);
  }
}

const work = await mkdtemp(join(tmpdir(), 'agentv-results-quickstart-'));
const remote = join(work, 'remote.git');
const project = join(work, 'project');

step('A throwaway project with a local bare remote');
git(['init', '--bare', '-q', '-b', 'main', remote]);
git(['--git-dir', remote, 'config', 'receive.denyNonFastForwards', 'true']);
git(['init', '-q', '-b', 'main', project]);
await writeFile(join(project, 'README.md'), '# demo agent\n');
await writeFile(join(project, '.gitignore'), '.agentv/results/\n');
git(['add', 'README.md', '.gitignore'], project);
git(['commit', '-q', '-m', 'Initial commit'], project);
git(['remote', 'add', 'origin', remote], project);
git(['push', '-q', 'origin', 'main'], project);
// Work in progress that publishing must leave alone.
await writeFile(join(project, 'README.md'), '# demo agent\n\nuncommitted edit\n');
await mkdir(join(project, 'src'), { recursive: true });
await writeFile(join(project, 'src/staged.ts'), 'export const staged = true;\n');
git(['add', 'src/staged.ts'], project);
const before = git(['status', '--porcelain'], project);
process.stdout.write(`project: ${project}\nremote:  ${remote}\n`);

step('Export the example results into a run workspace');
agentv(['export', example, '--experiment', 'demo-agent'], project);

// Where AgentV lists runs: .agentv/results/<run_id>, the run id being the earliest row's timestamp.
const runDir = join(project, '.agentv/results/2026-11-20T09-00-00-000Z');
step('Publish the run to agentv/results/v1 and agentv/artifacts/v1, and push');
agentv(['publish', runDir, '--push'], project);

step('What the results branch holds');
agentv(['list'], project);
agentv(['status'], project);

step('A self-contained HTML report');
agentv(['report', runDir], project);

const after = git(['status', '--porcelain'], project);
step('Your checkout was not touched');
process.stdout.write(
  after === before ? 'git status is exactly what it was before publishing.\n' : `git status changed!\nbefore:\n${before}\nafter:\n${after}\n`,
);
if (after !== before) process.exit(1);
process.stdout.write(`\nOpen ${join(runDir, 'report.html')} in a browser, or look around:\n  cd ${project} && git log --oneline agentv/results/v1\n`);
