/**
 * Issue 42's package figures: what `npm i agentv-results` puts on disk, and the two ways of keeping
 * the S3 client (storage_mode hybrid) out of it, measured on this checkout's own install:
 *
 *  - the package itself (`npm pack --dry-run`: unpacked size, files);
 *  - the default install: the package plus the closure of its `dependencies` in package-lock.json,
 *    each package's bytes on disk in node_modules/;
 *  - option A (chosen), the S3 client as an optional peer dependency: what a hybrid user adds
 *    (@aws-sdk/client-s3 and its closure);
 *  - option B, a SigV4 signer over `fetch`: @smithy/signature-v4's closure on every install (the
 *    signer alone; the S3 calls and their XML would be ours to write and keep);
 *  - the baseline: the install before (the S3 client and @types/node as dependencies).
 *
 * Sizes, not times: no sampling. `test/package-install.test.ts` installs the packed tarball and
 * checks the default install stays at most 15 MB.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './lib.mjs';

const exec = promisify(execFile);
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

function du(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of readdirSync(path)) n += du(join(path, e));
  return n;
}

/** The node_modules paths `names` bring, following package-lock.json's dependencies (hoisted layout). */
function closure(names) {
  const seen = new Set();
  const todo = [...names];
  while (todo.length) {
    const name = todo.pop();
    const path = `node_modules/${name}`;
    if (seen.has(path) || !lock.packages[path]) continue;
    seen.add(path);
    todo.push(...Object.keys(lock.packages[path].dependencies ?? {}));
  }
  return seen;
}
const bytesOf = (paths) => [...paths].reduce((n, p) => n + du(join(ROOT, p)), 0);
const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;

export async function run() {
  const { stdout } = await exec('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: ROOT, maxBuffer: 64 << 20 });
  const [info] = JSON.parse(stdout);
  const own = info.unpackedSize;
  const deps = closure(Object.keys(pkg.dependencies));
  const s3 = closure(['@aws-sdk/client-s3']);
  const signer = closure(['@smithy/signature-v4']);
  const before = closure([...Object.keys(pkg.dependencies), '@aws-sdk/client-s3', '@types/node']);
  const only = (set) => new Set([...set].filter((p) => !deps.has(p)));
  const defaultBytes = own + bytesOf(deps);
  const beforeBytes = own + bytesOf(before);
  const rows = [
    `| before (baseline): the S3 client and @types/node as dependencies | ${before.size + 1} | ${mb(beforeBytes)} | 1.00x |`,
    `| default install now (the package: ${mb(own)}, ${info.entryCount} files) | ${deps.size + 1} | ${mb(defaultBytes)} | ${(defaultBytes / beforeBytes).toFixed(2)}x (target ≤ 15 MB ${defaultBytes <= 15 * 1024 * 1024 ? '✓' : '✗'}) |`,
    `| option A (chosen): a hybrid user adds the optional peer @aws-sdk/client-s3 | +${only(s3).size} | +${mb(bytesOf(only(s3)))} | |`,
    `| option B: a SigV4 signer over fetch (@smithy/signature-v4) on every install | +${only(signer).size} | +${mb(bytesOf(only(signer)))} | |`,
  ];
  const markdown = `## Package size (issue 42)

Bytes on disk of what \`npm i agentv-results\` installs, from this checkout's install (package-lock.json's closure of each dependency at the top of node_modules/, apparent sizes: the sum of file sizes, less than \`du\` shows in disk blocks; the package's own from \`npm pack --dry-run\`). \`npm run bench -- package-size\`.

| install | packages | on disk | ratio to before |
|---|---|---|---|
${rows.join('\n')}

Option A is what ships: a default install never carries the S3 client, a hybrid user installs it once (the message says how), and the client stays AWS's maintained one. Option B would put its signer's closure on every install (${only(signer).size} packages, ${mb(bytesOf(only(signer)))}) and leave the S3 requests, their XML and retries to us.
`;
  return { markdown };
}
