import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../src/util/backoff.js';
import { mapLimit } from '../src/util/map-limit.js';
import { catalogListsRun } from '../src/layout/catalog-check.js';

describe('one backoff', () => {
  const policy = { baseMs: 100, capMs: 1_000 };
  it('equal jitter (the default) never goes below half the step', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, () => 0)).toBe(200);
    expect(backoffDelay(40, policy, () => 1)).toBe(1_000);
  });
  it('full jitter spreads over [0, step) and honours the round slot', () => {
    const full = { ...policy, jitter: 'full' as const };
    expect(backoffDelay(1, full, () => 0)).toBe(0);
    expect(backoffDelay(3, full, () => 0.999)).toBe(399);
    expect(backoffDelay(2, full, () => 0.5, 300)).toBe(300);
    expect(backoffDelay(40, full, () => 0.999)).toBe(999);
  });
});

describe('one mapLimit', () => {
  it('keeps order and never exceeds the limit in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, n));
      inFlight--;
      return `${i}:${n}`;
    });
    expect(out).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3']);
    expect(peak).toBe(2);
  });
  it('a limit of 0 still makes progress', async () => {
    expect(await mapLimit([1, 2], 0, async (n) => n * 2)).toEqual([2, 4]);
  });
});

describe('is the run in the catalog (parsed, not a substring)', () => {
  const catalog = [
    JSON.stringify({ run_id: 'exp/2026-03-01T10-00-00-000Z', experiment: 'exp' }),
    '{ "run_id" : "spaced/2026-03-02T10-00-00-000Z" }',
    JSON.stringify({ run_id: 'other', note: '"run_id":"ghost"' }),
    '{"run_id":"torn',
    '',
  ].join('\n');
  it('finds a listed run however the line is spaced', () => {
    expect(catalogListsRun(catalog, 'exp/2026-03-01T10-00-00-000Z')).toBe(true);
    expect(catalogListsRun(catalog, 'spaced/2026-03-02T10-00-00-000Z')).toBe(true);
  });
  it('does not take an id quoted inside another field, or a torn line, as listed', () => {
    expect(catalogListsRun(catalog, 'ghost')).toBe(false);
    expect(catalogListsRun(catalog, 'torn')).toBe(false);
  });
});
