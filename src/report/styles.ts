/**
 * The report's stylesheet: one inline `<style>` element allowed by its hash in the page's
 * Content-Security-Policy. System fonts only — a report must not fetch anything, fonts included.
 * It is static text (no data), so its hash is computed once.
 */
export const REPORT_CSS = `
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--card:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--err:#9a6700;--mid:#bf8700;--accent:#0969da;--track:#eaeef2;--code:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--card:#151b23;--pass:#3fb950;--fail:#f85149;--err:#d29922;--mid:#d29922;--accent:#4493f8;--track:#262c36;--code:#151b23}}
*{box-sizing:border-box}
body{margin:0;padding:24px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto}
h1{font-size:22px;margin:0 0 4px;word-break:break-word}
h2{font-size:16px;margin:28px 0 10px}
.sub{color:var(--muted);margin:0 0 16px;word-break:break-word}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:10px}
.stat{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.stat .v{font-size:20px;font-weight:600}
.stat .k{color:var(--muted);font-size:12px}
.stat.pass .v{color:var(--pass)}.stat.fail .v{color:var(--fail)}.stat.error .v{color:var(--err)}
.charts{display:flex;flex-wrap:wrap;gap:16px;margin-top:16px}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px;overflow-x:auto;max-width:100%}
.panel h3{margin:0 0 8px;font-size:13px;color:var(--muted);font-weight:600}
svg.chart{display:block;max-width:100%;height:auto}
svg .label,svg .value,svg .tick{fill:var(--fg);font-size:12px}
svg .tick{fill:var(--muted)}
svg .track{fill:var(--track)}
svg .axis{stroke:var(--line)}
svg .bar.good{fill:var(--pass)}svg .bar.mid{fill:var(--mid)}svg .bar.bad{fill:var(--fail)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;white-space:nowrap}
th.sortable{cursor:pointer;user-select:none}
th.sortable:hover{color:var(--fg)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.group-row{cursor:pointer}
tr.group-row:hover,tr.test-row:hover{background:var(--card)}
tr.group-row.active{outline:2px solid var(--accent);outline-offset:-2px}
svg.mini{display:inline-block;vertical-align:middle;margin-right:6px}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 10px}
.controls input,.controls select,.controls button,.pager button{font:inherit;padding:4px 8px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
.controls input[type=search]{min-width:260px}
.pager{display:flex;gap:8px;align-items:center;margin:10px 0}
.muted{color:var(--muted)}
tr.test-row{cursor:pointer}
tr.test-row td.id{font-weight:600;word-break:break-word;min-width:140px}
tr.test-row td.prompt{color:var(--muted);max-width:420px;word-break:break-word}
.tog{display:inline-block;width:1em;color:var(--muted)}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:11.5px;font-weight:600;border:1px solid currentColor;white-space:nowrap;line-height:18px}
.badge.pass{color:var(--pass)}.badge.fail{color:var(--fail)}.badge.error{color:var(--err)}
.badge.type{color:var(--accent)}
.badge.plain{color:var(--muted)}
tr.detail-row>td{background:var(--card);padding:12px 16px}
.detail h4{margin:12px 0 6px;font-size:13px}
.detail h4:first-child{margin-top:0}
.meta{display:flex;flex-wrap:wrap;gap:6px 14px;color:var(--muted)}
ul.asserts,ul.graders,ul.feedback{list-style:none;margin:0;padding:0}
ul.feedback li{padding:4px 0;border-bottom:1px dashed var(--line)}ul.feedback .who{font-weight:600}ul.feedback .text{white-space:pre-wrap}
ul.asserts li,ul.graders li{padding:4px 0;border-bottom:1px dashed var(--line)}
ul.graders ul.graders{margin-left:20px}
.mark{display:inline-block;width:1.3em;font-weight:700}
li.pass>.mark{color:var(--pass)}li.fail>.mark{color:var(--fail)}
.evidence{color:var(--muted);margin:2px 0 0 1.3em;white-space:pre-wrap;word-break:break-word}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:8px;margin:4px 0;white-space:pre-wrap;word-break:break-word;max-height:480px;overflow:auto}
pre.error{border-color:var(--fail)}
details{margin:6px 0}
details>summary{cursor:pointer;font-weight:600}
.msg{margin:6px 0 10px;border-left:3px solid var(--line);padding-left:8px}
.msg .role{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.tool{margin:4px 0 4px 8px}
.note{color:var(--err);font-size:12px}
.diff .add{color:var(--pass)}.diff .del{color:var(--fail)}.diff .hunk{color:var(--accent)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
`.trim();
