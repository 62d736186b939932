// Stand-in for the GitHub CLI in the simulated CI runner: `gh pr comment <n> --body-file <f>
// [--edit-last] [--create-if-none]` against a JSON file ($FAKE_GH_STATE) holding the comments, as
// gh does against the API: --edit-last edits this user's last comment on the pull request, and
// fails when there is none unless --create-if-none.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args[0] !== 'pr' || args[1] !== 'comment') {
  process.stderr.write(`fake gh: only "pr comment" is simulated (got ${args.join(' ')})\n`);
  process.exit(2);
}
if (!process.env.GH_TOKEN) {
  process.stderr.write('gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.\n');
  process.exit(4);
}
const pr = Number(args[2]);
const bodyFile = args[args.indexOf('--body-file') + 1];
const body = readFileSync(bodyFile, 'utf8');
const state = existsSync(process.env.FAKE_GH_STATE) ? JSON.parse(readFileSync(process.env.FAKE_GH_STATE, 'utf8')) : { comments: [] };
const mine = state.comments.filter((c) => c.pr === pr);
if (args.includes('--edit-last') && mine.length > 0) mine[mine.length - 1].body = body;
else if (args.includes('--edit-last') && !args.includes('--create-if-none')) {
  process.stderr.write('no comments found for current user\n');
  process.exit(1);
} else state.comments.push({ pr, body });
writeFileSync(process.env.FAKE_GH_STATE, JSON.stringify(state, null, 2));
