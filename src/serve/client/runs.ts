/**
 * The Runs view: the listing (run-list.ts), one run open below it (run-detail.ts) and one test of it
 * (test-detail.ts), as the route says.
 */
import { byId } from './dom.js';
import type { Route } from './route.js';
import { closeRun, initRunDetail, resetRun, showRun } from './run-detail.js';
import { initRunList, listingAsked, loadRuns, resetRunList } from './run-list.js';
import { hideTest, showTest } from './test-detail.js';

let refresh: () => Promise<void> = () => Promise.resolve();
let renderSeq = 0;

export function renderRuns(route: Route): Promise<void> {
  refresh = () => renderRuns(route);
  const jobs: Promise<void>[] = [];
  if (!route.run) jobs.push(loadRuns(route.q));
  else if (!listingAsked()) jobs.push(loadRuns(new URLSearchParams()));
  if (route.run) jobs.push(showRun(route.run, route.q, route.test));
  else closeRun();
  if (route.run && route.test) jobs.push(showTest(route.run, route.test, route.q));
  else hideTest();
  const linked = route.run ? (route.test ? 'test-detail' : 'run-detail') : null;
  if (linked) byId(linked).scrollIntoView({ block: 'start' });
  const seq = ++renderSeq;
  return Promise.all(jobs).then(() => {
    // What loaded above it (the listing, the run's tests) moved the linked element down: bring it
    // back into view, unless another route was rendered meanwhile.
    if (linked && seq === renderSeq) byId(linked).scrollIntoView({ block: 'start' });
  });
}

export function resetRuns(): void {
  resetRunList();
  resetRun();
}

export function initRuns(): void {
  initRunList();
  initRunDetail(() => refresh());
}
