/**
 * The Dashboard page: one self-contained document — the report's stylesheet plus a few rules of
 * its own, and one inline script — under a Content-Security-Policy that pins both by hash, like
 * the report's (src/report/template.ts), with one addition: `connect-src 'self'`, so the page can
 * call this server's API and nothing else. The markup is static; the only server-side value is the
 * write token, escaped into a meta tag. Run data reaches the page only through the script's
 * textContent/setAttribute (the client: src/serve/client/, compiled by util/client-script.ts).
 */
import { createHash } from 'node:crypto';
import { escapeHtml } from '../report/escape.js';
import { REPORT_CSS } from '../report/styles.js';
import { TRAJECTORY_CHART_CSS } from '../autoresearch/trajectory-html.js';
import { clientScript } from '../util/client-script.js';

const DASHBOARD_CSS =
  REPORT_CSS +
  `
nav.tabs{display:flex;gap:6px;margin:12px 0}
nav.tabs button,.btn{border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:6px;padding:5px 12px;cursor:pointer;font:inherit}
nav.tabs button[aria-selected=true]{border-color:var(--accent);color:var(--accent);font-weight:600}
.btn.primary{background:var(--accent);border-color:var(--accent);color:#fff}
.btn:disabled{opacity:.5;cursor:default}
.remote{display:flex;flex-wrap:wrap;gap:14px;align-items:center}
.remote .kv{font-size:13px}.remote .kv b{font-weight:600}
span.msg{margin:0 0 0 8px;border:0;padding:0;color:var(--muted)}span.msg:empty{display:none}.msg.bad{color:var(--fail)}
.tag{display:inline-block;border:1px solid var(--line);border-radius:10px;padding:0 8px;margin:0 4px 2px 0;font-size:12px;background:var(--bg)}
.tag-x{border:0;background:none;color:var(--muted);cursor:pointer;padding:0 0 0 4px;font:inherit}
.linkish{border:0;background:none;color:var(--accent);cursor:pointer;padding:0;text-align:left;word-break:break-all}
.filters{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.filters label{font-size:12px;color:var(--muted);display:flex;flex-direction:column;gap:2px}
.badge{border-radius:10px;padding:0 8px;font-size:12px;border:1px solid var(--line)}
.badge.pass{color:var(--pass)}.badge.fail{color:var(--fail)}.badge.error{color:var(--err)}.badge.tie{color:var(--muted)}
.feedback{white-space:pre-wrap;word-break:break-word;max-width:420px}
.edit{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start;margin:8px 0}
textarea{min-width:320px;min-height:60px;font:inherit}
svg .trend-line{fill:none;stroke:var(--accent);stroke-width:2}
svg .pt{fill:var(--accent)}svg .pt.regression{fill:var(--fail);stroke:var(--bg);stroke-width:1.5}
.series h3{margin:18px 0 6px;font-size:14px}
ul.plain{margin:4px 0;padding-left:18px}
.empty{padding:12px;margin:0;color:var(--muted)}
ul.warnings{margin:6px 0;padding:8px 8px 8px 26px;border:1px solid var(--err);border-radius:6px;color:var(--err)}
svg .grid{stroke:var(--line);stroke-width:1;opacity:.6}svg .tick{font-size:11px;fill:var(--muted)}
#test-detail{margin-top:12px}#test-tabs a{border:1px solid var(--line);border-radius:6px;padding:4px 12px;text-decoration:none;color:var(--fg)}
#test-tabs a[aria-selected=true]{border-color:var(--accent);color:var(--accent);font-weight:600}
.pre{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;font-size:12px;background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:6px;margin:4px 0;max-height:480px;overflow:auto}
ul.assertions{list-style:none;padding-left:0}ul.assertions li{margin:6px 0}ul.assertions .pass .mark{color:var(--pass)}ul.assertions .fail .mark{color:var(--fail)}
ul.assertions .text{display:inline}.evidence{font-size:12px;margin:2px 0 0 18px;white-space:pre-wrap}
.msg-turn{margin:8px 0}.msg-turn .role{font-size:12px;font-weight:600;color:var(--muted);text-transform:uppercase}
.note{font-size:12px;color:var(--muted)}.pager a.btn{text-decoration:none}
body[data-static=true] :is(#remote,#tab-autoresearch,.where,#tag-input,#tag-add,.tag-x,.edit:has(#fb-save),footer.live){display:none}body:not([data-static=true]) footer.static{display:none}
${TRAJECTORY_CHART_CSS}`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The script and the policy that pins it, computed once (from source, the first call compiles the client). */
let page: { js: string; csp: string } | null = null;
function compiled(): { js: string; csp: string } {
  if (page) return page;
  const js = clientScript('dashboard');
  for (const [name, text] of [
    ['script', js],
    ['stylesheet', DASHBOARD_CSS],
  ] as const) {
    // A plain Error on purpose: about our own bundled asset (a build bug, never user input).
    if (/<\/(script|style)|<!--/i.test(text)) throw new Error(`dashboard ${name} contains a sequence that would end its element`);
  }
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(js)}`,
    `style-src ${sha256(DASHBOARD_CSS)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  page = { js, csp };
  return page;
}

/** The header adds frame-ancestors, which browsers ignore (and warn about) in a meta element. */
export function dashboardCsp(): string {
  return `${compiled().csp}; frame-ancestors 'none'`;
}

const BODY = `<main>
<header><h1>AgentV results</h1><p class="sub">Runs published to the results branch by every machine<span id="project-box" hidden> · <label>project <select id="project" aria-label="Project"><option value="">(this directory)</option></select></label></span></p></header>
<section id="remote" class="panel" aria-label="Remote">
<div class="remote">
<span class="kv">status <b data-field="sync_status">…</b></span>
<span class="kv">branch <b data-field="branch">…</b></span>
<span class="kv">upstream <b data-field="upstream">…</b></span>
<span class="kv">ahead <b data-field="ahead">…</b></span>
<span class="kv">behind <b data-field="behind">…</b></span>
<span class="kv">runs <b data-field="run_count">…</b></span>
<span class="kv">outbox <b data-field="outbox">…</b></span>
<span class="kv">last push <b data-field="last_push">…</b></span>
<span class="kv">remote <b data-field="remote_url">…</b></span>
<button type="button" id="sync-btn" class="btn primary">Sync</button><span id="remote-msg" class="msg" role="status"></span>
</div>
<div class="remote"><div><h3>Sync branches awaiting review</h3><ul id="sync-branches" class="plain"></ul></div><div><h3>WIP branches</h3><ul id="wip-branches" class="plain"></ul></div></div>
</section>
<nav class="tabs" role="tablist"><button type="button" role="tab" id="tab-runs" aria-selected="true">Runs</button><button type="button" role="tab" id="tab-trends" aria-selected="false">Trends</button><button type="button" role="tab" id="tab-autoresearch" aria-selected="false">Autoresearch</button></nav>
<div id="view-runs">
<div class="filters">
<label>Experiment<select id="f-experiment"><option value="">all</option></select></label>
<label>Target<select id="f-target"><option value="">all</option></select></label>
<label>Tag<input id="f-tag" type="search" placeholder="tag"></label>
<label>From<input id="f-since" type="date"></label>
<label>To<input id="f-until" type="date"></label>
</div>
<div class="panel"><table id="runs-table"><thead><tr><th></th><th>Run</th><th>Time</th><th>Experiment</th><th>Targets</th><th class="num">Passed</th><th class="num">Pass rate</th><th>Tags</th><th class="where">Where</th></tr></thead><tbody id="runs-body"></tbody></table><p id="runs-empty" class="empty" hidden></p></div>
<div class="pager"><button type="button" class="btn" id="runs-prev">‹ Prev</button> <span id="runs-count" class="muted"></span> <button type="button" class="btn" id="runs-next">Next ›</button> <button type="button" class="btn" id="compare-btn" disabled>Compare selected</button><span id="runs-msg" class="msg"></span></div>
<section id="run-detail" hidden><h2 id="run-title"></h2><span id="run-msg" class="msg"></span>
<div id="run-missing" class="panel empty" role="alert" hidden></div>
<div id="run-body" hidden>
<div id="run-stats" class="stats"></div>
<p><a id="run-report" href="#" target="_blank" rel="noopener">Open the full report of this run</a></p>
<div class="edit"><strong>Tags</strong> <span id="run-tags"></span> <input id="tag-input" placeholder="new tag" aria-label="New tag"> <button type="button" class="btn" id="tag-add">Add tag</button><span id="tag-msg" class="msg"></span></div>
<div class="panel"><table><thead><tr><th>Test</th><th>Target</th><th>Status</th><th class="num">Score</th><th class="num">Duration</th><th>Feedback</th></tr></thead><tbody id="tests-body"></tbody></table><div id="tests-pager" class="pager" hidden></div></div>
<section id="test-detail" class="panel" hidden><h3 id="test-title" class="mono"></h3><div id="test-meta"></div><span id="test-msg" class="msg" role="status"></span>
<nav id="test-tabs" class="tabs" role="tablist"></nav>
<div id="test-grading"></div><div id="test-answer" hidden></div><div id="test-transcript" hidden></div>
</section>
<div class="edit"><strong>Feedback</strong> <select id="fb-test" aria-label="Test"></select> <textarea id="fb-text" aria-label="Feedback"></textarea> <input id="fb-reviewer" placeholder="your name (reviewer)" aria-label="Reviewer"> <button type="button" class="btn" id="fb-save">Save feedback</button><span id="fb-msg" class="msg"></span></div>
</div>
</section>
<section id="compare-view" hidden><h2>Compare <span id="compare-title"></span></h2>
<div class="filters"><button type="button" class="btn" id="compare-swap">⇄ Swap baseline and candidate</button><label>Target<select id="compare-target" aria-label="Compare target"><option value="">all targets</option></select></label><span id="compare-msg" class="msg" role="status"></span></div>
<p id="compare-rule" class="muted"></p>
<ul id="compare-warnings" class="warnings" hidden></ul>
<div id="compare-stats" class="stats"></div>
<div class="panel"><table><thead><tr><th>Test</th><th id="compare-target-col" hidden>Target</th><th class="num">Baseline</th><th class="num">Candidate</th><th class="num">Delta</th><th>Outcome</th></tr></thead><tbody id="compare-body"></tbody></table><div id="compare-pager" class="pager" hidden></div></div>
</section>
</div>
<div id="view-trends" hidden>
<div class="filters"><label>Experiment<select id="t-experiment"><option value="">all</option></select></label><label>Target<select id="t-target"><option value="">all</option></select></label><label>Series<select id="t-by" aria-label="Series"><option value="none">one (pooled)</option><option value="target">per target</option><option value="experiment">per experiment</option><option value="experiment,target">per experiment × target</option></select></label><span id="trend-msg" class="msg" role="status"></span></div>
<p class="muted">By default one series with every target pooled, as <code>agentv trend</code> (and <code>agentv-results trend</code>); split it per target or experiment above. Runs are placed by date, the most recent series first. A red point is a run the trend rule flags as a regression.</p>
<div id="trend-charts"></div>
</div>
<div id="view-autoresearch" hidden>
<div class="filters"><label>Experiment<select id="ar-experiment" aria-label="Autoresearch experiment"><option value="">choose</option></select></label><span id="ar-msg" class="msg" role="status"></span></div>
<p class="muted">The keep/drop loop of <code>autoresearch record</code>, read from <code>.agentv/results/runs/&lt;experiment&gt;/_autoresearch/iterations.jsonl</code> in this directory; it re-reads every 5 s. <a id="ar-page" href="#" target="_blank" rel="noopener" hidden>Open as trajectory.html</a></p>
<div id="ar-view" class="trajectory"></div>
</div>
<footer class="live">agentv-results serve · writes need this page's token; the page talks to nothing but this server.</footer>
<footer class="static">agentv-results site · a read-only copy of the results branch, rebuilt by <code>agentv-results site</code>; the page reads nothing but this site's files.</footer>
</main>`;

/**
 * The page. `static`: the history site's copy (src/site/): read-only, no remote panel, the client
 * reading the site's JSON files beside the page instead of a server's API.
 */
export function renderDashboard(opts: { token: string; readOnly: boolean; static?: boolean }): string {
  const { js, csp } = compiled();
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<meta name="agentv-results-token" content="${escapeHtml(opts.token)}">`,
    '<link rel="icon" href="data:,">',
    '<title>AgentV results — Dashboard</title>',
    `<style>${DASHBOARD_CSS}</style></head><body data-read-only="${opts.readOnly || opts.static ? 'true' : 'false'}"${opts.static ? ' data-static="true"' : ''}>`,
    BODY,
    `<script>${js}</script></body></html>\n`,
  ].join('');
}
