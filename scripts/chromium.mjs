// Where the tests and benches find a headless Chromium: one that installs from the npm registry
// (@sparticuz/chromium ships a Chromium build inside its package), so a machine with only Node.js
// and git runs the browser tests. The package's brotli archives are unpacked once into
// node_modules/.cache/agentv-results-chromium/<version>/, staged in a private directory and
// renamed into place, so concurrent first uses never see half an executable.
// AGENTV_CHROMIUM=<path> picks another Chromium (a system one, say) instead.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'agentv-results-chromium');

/** Flags for a headless run on a closed network: no sandbox (tests run as root in CI), no GPU, no
 * background connections. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The path of the Chromium executable, unpacking the npm package's build on first use. */
export async function chromiumExecutable() {
  if (process.env.AGENTV_CHROMIUM) return process.env.AGENTV_CHROMIUM;
  const pkg = join(ROOT, 'node_modules', '@sparticuz', 'chromium', 'package.json');
  const { version } = JSON.parse(readFileSync(pkg, 'utf8'));
  const dir = join(CACHE, version);
  const done = join(dir, '.complete');
  if (existsSync(done)) return join(dir, 'chromium');
  mkdirSync(CACHE, { recursive: true });
  const stage = mkdtempSync(join(CACHE, '.stage-'));
  // The package unpacks into os.tmpdir(), which follows TMPDIR at each call.
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = stage;
  try {
    const { default: Chromium } = await import('@sparticuz/chromium');
    await Chromium.executablePath();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  writeFileSync(join(stage, '.complete'), `${version}\n`);
  try {
    renameSync(stage, dir);
  } catch (err) {
    // Another process finished first; its copy is complete, ours is not needed.
    rmSync(stage, { recursive: true, force: true });
    if (!existsSync(done)) throw err;
  }
  return join(dir, 'chromium');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await chromiumExecutable());
}
