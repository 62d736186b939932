// Stand-in for the GitHub CLI in the simulated CI runner: `gh api` on a pull request's comments,
// against a JSON file ($FAKE_GH_STATE: { comments: [{ id, pr, user, body }] }), as GitHub's REST
// API answers it:
// - GET repos/<owner>/<repo>/issues/<n>/comments: 30 a page (the first page only, unless
//   --paginate); --jq is applied for the one expression the action uses (any other is refused);
// - POST the same with --input <file|->: a new comment by the token's user (github-actions[bot]);
// - PATCH repos/<owner>/<repo>/issues/comments/<id> with --input: edits that comment (403 when
//   another user wrote it).
// With $FAKE_GH_FAIL set every call fails as an API outage does (HTTP 502, exit 1). `gh pr comment`
// is simulated too (--edit-last edits this user's last comment), for older recipes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const BOT = 'github-actions[bot]';
const JQ_LAST_GATE = '[.[] | select(.body | startswith("<!-- agentv-results:gate -->")) | .id] | last // empty';
const args = process.argv.slice(2);
const fail = (message, code = 1) => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};
if (!process.env.GH_TOKEN) fail('gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.', 4);
const load = () => (existsSync(process.env.FAKE_GH_STATE) ? JSON.parse(readFileSync(process.env.FAKE_GH_STATE, 'utf8')) : { comments: [] });
const save = (state) => writeFileSync(process.env.FAKE_GH_STATE, JSON.stringify(state, null, 2));
const flag = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const nextId = (state) => state.comments.reduce((m, c) => Math.max(m, c.id), 1000) + 1;

if (args[0] === 'api') {
  if (process.env.FAKE_GH_FAIL) fail('gh: HTTP 502: Bad Gateway (https://api.github.com/)');
  const valued = new Set(['--method', '--jq', '--input', '-X', '-q']);
  const endpoint = args.slice(1).find((a, i, rest) => !a.startsWith('-') && !valued.has(rest[i - 1] ?? '')) ?? '';
  const method = flag('--method') ?? (args.includes('--input') ? 'POST' : 'GET');
  const state = load();
  const list = /^repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(endpoint);
  const one = /^repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(endpoint);
  const input = () => {
    const from = flag('--input');
    const text = readFileSync(from === '-' ? 0 : from, 'utf8');
    const body = JSON.parse(text).body;
    if (typeof body !== 'string') fail('gh: HTTP 422: body is missing');
    return body;
  };
  if (list && method === 'GET') {
    const mine = state.comments.filter((c) => c.pr === Number(list[1]));
    const pages = [];
    for (let i = 0; i < mine.length; i += 30) pages.push(mine.slice(i, i + 30));
    const shown = (args.includes('--paginate') ? pages : pages.slice(0, 1)).map((p) => p.map((c) => ({ id: c.id, body: c.body, user: { login: c.user } })));
    const jq = flag('--jq');
    if (jq === undefined) process.stdout.write(shown.map((p) => JSON.stringify(p)).join(''));
    else if (jq === JQ_LAST_GATE) {
      // gh applies the expression to each page.
      for (const p of shown) {
        const ids = p.filter((c) => c.body.startsWith('<!-- agentv-results:gate -->')).map((c) => c.id);
        if (ids.length > 0) process.stdout.write(`${ids.at(-1)}\n`);
      }
    } else fail(`fake gh: the jq expression ${jq} is not simulated`, 2);
    process.exit(0);
  }
  if (list && method === 'POST') {
    const comment = { id: nextId(state), pr: Number(list[1]), user: BOT, body: input() };
    state.comments.push(comment);
    save(state);
    process.stdout.write(JSON.stringify(comment));
    process.exit(0);
  }
  if (one && method === 'PATCH') {
    const comment = state.comments.find((c) => c.id === Number(one[1]));
    if (!comment) fail('gh: Not Found (HTTP 404)');
    if (comment.user !== BOT) fail('gh: Resource not accessible by integration (HTTP 403)');
    comment.body = input();
    save(state);
    process.stdout.write(JSON.stringify(comment));
    process.exit(0);
  }
  fail(`fake gh: api ${method} ${endpoint} is not simulated`, 2);
}

if (args[0] !== 'pr' || args[1] !== 'comment') fail(`fake gh: only "api" and "pr comment" are simulated (got ${args.join(' ')})`, 2);
const pr = Number(args[2]);
const body = readFileSync(flag('--body-file'), 'utf8');
const state = load();
const mine = state.comments.filter((c) => c.pr === pr && c.user === BOT);
if (args.includes('--edit-last') && mine.length > 0) mine[mine.length - 1].body = body;
else if (args.includes('--edit-last') && !args.includes('--create-if-none')) fail('no comments found for current user');
else state.comments.push({ id: nextId(state), pr, user: BOT, body });
save(state);
