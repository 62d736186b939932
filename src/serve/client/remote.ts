/** The remote panel: AgentV's status fields, our extras, and Sync. */
import type { RemoteStatusAnswer } from '../api-types.js';
import { api, READ_ONLY } from './api.js';
import { byId, clear, el, flash, safeHttpUrl, setField } from './dom.js';

let hasRemote = false;

function show(s: RemoteStatusAnswer): void {
  const box = byId('remote');
  const ours: Partial<NonNullable<RemoteStatusAnswer['agentv_results']>> = s.agentv_results ?? {};
  // AgentV's wire value stays in data-sync-status; a repository with no results branch says so in words.
  const noBranch = ours.results?.state === 'missing';
  setField(box, 'sync_status', noBranch ? 'no results branch yet' : s.sync_status);
  setField(box, 'branch', s.branch ?? '—');
  setField(box, 'upstream', s.upstream ?? 'no remote');
  setField(box, 'ahead', s.ahead ?? '—');
  setField(box, 'behind', s.behind ?? '—');
  setField(box, 'run_count', s.run_count);
  setField(box, 'outbox', ours.outbox ? ours.outbox.depth + (ours.outbox.failed ? ` (${ours.outbox.failed} failed)` : '') : '—');
  setField(box, 'last_push', ours.last_push ? ours.last_push.at : '—');
  setField(box, 'remote_url', ours.remote_url ?? '—');
  box.setAttribute('data-sync-status', String(s.sync_status));
  hasRemote = Boolean(s.upstream);
  const btn = byId<HTMLButtonElement>('sync-btn');
  btn.disabled = READ_ONLY || !hasRemote;
  btn.title = hasRemote ? '' : 'no remote is configured for the results branch: nothing to sync with';
  if (!s.configured && s.last_error) flash('remote-msg', s.last_error, true);
  else if (s.last_error) flash('remote-msg', `last sync failed: ${s.last_error}`, true);
  const list = byId('sync-branches');
  clear(list);
  for (const b of ours.sync_branches ?? []) {
    const li = el('li');
    const url = b.compare_url ? safeHttpUrl(String(b.compare_url)) : null;
    if (url) {
      const a = el('a', null, b.branch);
      a.setAttribute('href', url);
      a.setAttribute('rel', 'noopener noreferrer');
      a.setAttribute('target', '_blank');
      li.appendChild(a);
    } else li.appendChild(el('code', null, b.branch));
    li.appendChild(el('span', 'muted', ` ${b.conflicts} conflict(s) · ${b.resolve_command}`));
    list.appendChild(li);
  }
  if (!list.firstChild) list.appendChild(el('li', 'muted', 'none open'));
  const wip = byId('wip-branches');
  clear(wip);
  for (const w of ours.wip ?? []) wip.appendChild(el('li', null, `${w.branch} · ${w.rows === null ? '?' : w.rows} rows · ${w.where}`));
  if (!wip.firstChild) wip.appendChild(el('li', 'muted', 'none'));
}

export function loadRemote(): Promise<void> {
  return api<RemoteStatusAnswer>('/remote/status')
    .then(show)
    .catch((e: Error) => flash('remote-msg', e.message, true));
}

export function initRemote(onSynced: () => void): void {
  const btn = byId<HTMLButtonElement>('sync-btn');
  btn.addEventListener('click', () => {
    btn.disabled = true;
    flash('remote-msg', 'syncing…');
    api<RemoteStatusAnswer>('/remote/sync', 'POST')
      .then((s) => {
        show(s);
        if (s.blocked)
          flash(
            'remote-msg',
            `sync blocked: ${s.block_reason ?? 'unknown'}${/unreachable|could not read|connect|resolve host|timed out/i.test(String(s.block_reason)) ? ' (remote unreachable?)' : ''}`,
            true,
          );
        else flash('remote-msg', s.push_performed ? 'pushed' : 'already in sync');
        onSynced();
      })
      .catch((e: Error) => flash('remote-msg', e.message, true))
      .finally(() => {
        btn.disabled = READ_ONLY || !hasRemote;
      });
  });
}
