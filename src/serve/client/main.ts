/**
 * The Dashboard's client, compiled by esbuild into the page's one inline script (util/client-script.ts).
 * It renders the view the URL names (route.ts) and re-renders on every navigation, so links,
 * reloads and the back button all land on the same view.
 */
import { initAutoresearch, renderAutoresearch } from './autoresearch.js';
import { scope, STATIC, withProject } from './api.js';
import { renderCompare, resetCompare } from './compare.js';
import { byId, el } from './dom.js';
import { initRemote, loadRemote } from './remote.js';
import { current, go, href, type View } from './route.js';
import { initRuns, renderRuns, resetRuns } from './runs.js';
import { renderTrends, resetTrends } from './trends.js';

const TABS: { tab: View; panel: string }[] = [
  { tab: 'runs', panel: 'view-runs' },
  { tab: 'compare', panel: 'view-runs' },
  { tab: 'trends', panel: 'view-trends' },
  { tab: 'autoresearch', panel: 'view-autoresearch' },
];

let project: string | null = null;

function render(): void {
  const route = current();
  const p = route.q.get('project') ?? '';
  if (p !== project) {
    const first = project === null;
    project = p;
    scope.project = p;
    byId<HTMLSelectElement>('project').value = p;
    if (!first) {
      resetRuns();
      resetCompare();
      resetTrends();
    }
    if (!STATIC) void loadRemote();
  }
  for (const v of ['runs', 'trends', 'autoresearch'] as const) {
    const on = route.view === v || (v === 'runs' && route.view === 'compare');
    byId(`view-${v}`).hidden = !on;
    byId(`tab-${v}`).setAttribute('aria-selected', String(on));
  }
  byId('compare-view').hidden = route.view !== 'compare';
  document.body.setAttribute('data-view', route.view);
  if (route.view === 'runs') void renderRuns(route);
  if (route.view === 'compare') {
    // The comparison first; the run list above it once the comparison is on screen.
    const nav = ++compareNav;
    byId('compare-view').scrollIntoView({ block: 'start' });
    void renderCompare(route)
      .then(() => renderRuns({ ...route, run: null, test: null, q: new URLSearchParams() }))
      .then(() => {
        // The list loaded above the comparison and moved it down: back into view, unless the route changed.
        if (nav === compareNav && document.body.getAttribute('data-view') === 'compare') byId('compare-view').scrollIntoView({ block: 'start' });
      });
  }
  if (route.view === 'trends') void renderTrends(route);
  if (route.view === 'autoresearch') void renderAutoresearch(route);
}

let compareNav = 0;

function init(): void {
  for (const { tab } of TABS) {
    const b = document.getElementById(`tab-${tab}`);
    b?.addEventListener('click', () => go(href(tab, withProject({}))));
  }
  byId('project').addEventListener('change', () => go(href('runs', { project: byId<HTMLSelectElement>('project').value || null })));
  initRemote(() => {
    resetRuns();
    render();
  });
  initRuns();
  initAutoresearch();
  // The static site is one project's copy: no projects to choose from.
  if (!STATIC)
    fetch('/api/projects')
      .then((r) => r.json())
      .then((p) => {
        const sel = byId<HTMLSelectElement>('project');
        for (const x of p.projects ?? []) {
          const o = el('option', null, x.id);
          o.value = x.id;
          sel.appendChild(o);
        }
        sel.value = scope.project;
        if (p.projects?.length) byId('project-box').hidden = false;
      })
      .catch(() => {});
  window.addEventListener('popstate', render);
  window.addEventListener('hashchange', render);
  window.addEventListener('agentv-route', render);
  render();
}

init();
