/**
 * The cost model of bench/archive.bench.mjs's section: publish, list, merge, rollover and
 * retention as functions of runs per day and the windows, with this run's measurements put in,
 * and what the hosting limits mean for a team at 1.8 M runs a year.
 */
import { fmtMs } from './lib.mjs';

const kb = (b) => `${(b / 1024).toFixed(0)} KB`;
const mb = (b) => `${(b / 1024 ** 2).toFixed(1)} MB`;
const gb = (b) => `${(b / 1024 ** 3).toFixed(0)} GB`;
const n = (x) => Math.round(x).toLocaleString('en-US');

export function costModel({ states, base, k1, roll, big, weight }) {
  const at = (name) => states.find((s) => s.name === name);
  const [k10, a100, a5k] = [at('live-10k'), at('archived-100k'), at('archived-100k-5k')];
  const perRowUs = ((a100.list - k1.list) / (a100.listed - k1.listed)) * 1000;
  const yearRuns = 1_800_000;
  const perDay = 5000;
  const listYear = k1.list + (perRowUs * (yearRuns - k1.listed)) / 1000;
  const runBytes = weight.results + weight.artifacts;
  const merges = states.map((s) => s.merge);
  const rollPerRun = roll.ms / roll.archived;
  return `### Cost model

Notation: *r* runs published per day (all machines together), *W* runs live (the archive window: at most \`keep_runs\`, only runs of the last \`keep_days\`), *D* catalog days on the live branch, *C* catalogued runs (live and archived, until retention removes them: about *r* × the retention window in days), *M* runs in one month archive (≈ 30 *r*), *k* runs one rollover or retention moves.

| operation | cost | measured (this run) |
|---|---|---|
| \`publish\` | O(size of the run) + O(*W*) (the live root tree) + O(*D*) (\`.indexes/\`) + O(*r*) (the day's catalog file, rewritten whole) — **not** O(*C*): archived runs and their rows in older day files are never read | flat: onto 100,000 archived runs ${fmtMs(a100.publish)}, onto an empty branch ${fmtMs(base.publish)}, onto 1,000 / 10,000 live runs ${fmtMs(k1.publish)} / ${fmtMs(k10.publish)}; a day file of 5,000 rows instead of 200: ${fmtMs(a5k.publish)} vs ${fmtMs(a100.publish)} |
| \`list\` | O(*C*): every catalog row (one \`cat-file\` for all day files); \`--since\` reads only the days asked for | ${fmtMs(k1.list)} for 1,000 runs, ${fmtMs(k10.list)} for 10,000, ${fmtMs(a100.list)} for 100,200: ≈ ${perRowUs.toFixed(1)} µs a row |
| sync merge | O(paths both sides changed) + the root and \`.indexes/\` trees + O(*r*): both sides appended to the day's catalog file, merged row by row — independent of *C* | ${fmtMs(Math.min(...merges))}–${fmtMs(Math.max(...merges))} on every state; ${fmtMs(a5k.merge)} with a 5,000-row day file against ${fmtMs(a100.merge)} with 200 rows |
| \`archive\` (rollover) | O(*C*) to read the catalog + O(*k*) grafts (no blob rewritten) + O(*k* × *M*): fast-import inserts into a directory by a linear scan | ${fmtMs(roll.ms)} for 10,000 runs into new months (${(rollPerRun * 1000).toFixed(0)} µs a run); ${fmtMs(big.rollMs)} for ${big.rolled} runs into a ${n(big.monthSize)}-run month, of which ${fmtMs(big.rollDryMs)} is reading 100,200 catalog rows and planning (the dry run) |
| \`expire\` (retention) | the same shape: O(*C*) + O(*k*) deletions + O(*k* × *M*) | ${fmtMs(roll.expMs)} for 10,000 archived runs; ${fmtMs(big.expMs)} for ${n(big.expired)} runs with ${n(big.fromBig)} out of the ${n(big.monthSize)}-run month (dry run ${fmtMs(big.expDryMs)}) |
| AgentV's Dashboard | one \`ls-tree -r\` of the live branch: O(*W* × paths per run), 1 MB ceiling | the live window is what bounds it (see below) |

**A team at 1.8 M runs a year** (100 CI machines × 50 runs a day: *r* = ${n(perDay)}). The 40-row synthetic run of the benchmark weighs ${kb(weight.results)} on the results branch and ${kb(weight.artifacts)} on the artifacts branch, packed (${kb(runBytes / 40)} a test; real runs weigh what their transcripts and outputs weigh, and those go to the artifacts branch); one catalog row is ${weight.catalogLine} bytes.

- **Publish** stays as flat as measured above whatever the history: the live window (default 200 runs, 30 days) bounds the root tree, retention bounds \`.indexes/\` (one entry a day), and the day's catalog file is *r* rows: ${n(perDay)} × ${weight.catalogLine} B ≈ ${mb(perDay * weight.catalogLine)}, rewritten by every publish of that day (git stores and pushes it as a delta of the previous version once packed), and merged row by row when two machines published that day.
- **List** is the figure that grows: with *C* = 1.8 M catalogued runs (a one-year retention) a full \`list\` reads ${n((yearRuns * weight.catalogLine) / 1024 ** 2)} MB of rows, ≈ ${fmtMs(listYear)} at the rate measured here; \`list --since <day>\` costs only the days asked for. Retention (\`expire\`) is what bounds *C*; the archive alone does not (archived runs keep their row, so \`list\` and \`pull\` find them).
- **Merge** does not grow with history, only with the day's rows; what grows with the fleet is contention: pushes are fast-forward only, so machines finishing together land one per round (see "sync" above), and every loser fetches, merges and pushes again.
- **The Dashboard's ceiling** is per test, not per run: a run exported from results JSONL costs ~474 bytes of listing a row and an AgentV run 860 bytes a test (\`npm run bench -- agentv-publish\`), so 1 MB holds ~2,200 rows or ~1,200 tests. 200 runs fit only runs of up to ~11 rows (~6 AgentV tests), so the rollover's third bound does the work: it archives the oldest live runs until the listing is under \`results.archive.max_listing_bytes\` (default 768 KiB), whatever the runs' size. At ${n(perDay)} runs a day that bound, not the day bound, is what keeps the live branch listable, and a rollover has to run several times a day (\`daemon --archive-every 2h\`).
- **Hosting limits (GitHub's "Repository limits" page; check the current figures).** *Push size* (2 GB, enforced) and *file size* (100 MB enforced, 1 MB recommended per object): a push carries one run or a daemon's queued handful, far below 2 GB; our largest file is the day's catalog (~${mb(perDay * weight.catalogLine)}), over the 1 MB recommendation only past ~${n((1024 * 1024) / weight.catalogLine)} runs a day; a single payload over 100 MB is refused by GitHub and stays pending here. *Branches* (5,000 recommended): two per archive month, 24 a year. *Pushes*: ${n(perDay)} publishes a day is ≈ ${(perDay / 1440).toFixed(1)} pushes a minute around the clock and many more when the fleet finishes together; GitHub throttles frequent pushes to one repository (a third-party summary of that page puts the recommendation near 6 a minute), so at this rate push in batches — the daemon's outbox sends everything queued in one push, and \`publish\` without \`--push\` plus \`sync\` on a timer does the same — and reads (fetches) stay under its 15 a second. *Directory width* (3,000 entries recommended): the live root holds *W* ≤ 3,000 and \`.indexes/\` one entry a day, but a month archive at this rate is one directory of ~${n(30 * perDay)} runs, ~${Math.round((30 * perDay) / 3000)}× the recommendation, and every rollover into it rewrites that one big tree (fast-import inserts into a directory by a linear scan: ${fmtMs(Math.max(0, big.rollMs - big.rollDryMs))} of the ${fmtMs(big.rollMs)} above, for ${big.rolled} runs into ${n(big.monthSize)}). Archive branches are now sharded by day (runs under \`<YYYY-MM-DD>/<run>\`, section "Day-sharded archives"): a rollover rewrites one day's tree, and the widest archive directory is a day's runs (5,000 at this rate) instead of a month's; the figures of this section were measured on the unsharded layout, which older archives keep. *On-disk size* (10 GB recommended): ${n(yearRuns)} runs like the benchmark's add ≈ ${gb(yearRuns * runBytes)} a year (${gb(yearRuns * weight.results)} of results, ${gb(yearRuns * weight.artifacts)} of payloads), ${Math.round((yearRuns * runBytes) / (10 * 1024 ** 3))} times the recommendation, before any real transcript. Retention does not shrink that: its commits delete paths, and git history keeps every blob. A team that must reclaim space starts a new branch generation (\`results.branch: agentv/results/v2\`, \`artifacts_branch: agentv/artifacts/v2\`), keeps the old generation as long as it wants (a \`git bundle\` of it off GitHub), and only then deletes the old branches from the shared remote — a deliberate ref deletion, never a rewrite of a branch others push to. At this volume the payloads belong elsewhere than one GitHub repository: a separate repository for the artifacts branch or object storage, neither of which is built (both branches live in the one repository \`results.repo\` names).
`;
}
