/**
 * Where the static site keeps each Dashboard answer (model/site-paths.ts), the one mapping its
 * builder and the page's script share: names stay inside the site whatever the ids hold, distinct
 * questions get distinct files, and one question asked in another order or with the page's own
 * parameters gets the same file.
 */
import { describe, expect, it } from 'vitest';
import { canonicalQuery, siteFile, siteSegment } from '../src/model/site-paths.js';
import { safeRelativePath } from '../src/runs/read/run-files.js';

const HOSTILE = ['..', '.', '', '../../etc/passwd', 'a/b', 'a\\b', '</script>', 'CON', '~2E', '.hidden', 'é', '\u0000', 'x'.repeat(400), `${'x'.repeat(400)}y`];

describe('site paths', () => {
  it('turns any id into one safe segment, distinct ids into distinct segments', () => {
    const segs = HOSTILE.map(siteSegment);
    for (const s of segs) {
      expect(s).toMatch(/^[A-Za-z0-9_~-]+$/);
      expect(s.length).toBeLessThanOrEqual(96);
    }
    expect(new Set(segs).size).toBe(HOSTILE.length);
    expect(siteSegment('2026-03-14T10-32-00-000Z')).toBe('2026-03-14T10-32-00-000Z');
  });

  it('names a file under api/ for every question, never outside it', () => {
    for (const id of HOSTILE) {
      const f = siteFile(`/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(id)}?target=${encodeURIComponent(id)}`);
      expect(safeRelativePath(f)).toBe(f);
      expect(f.startsWith('api/runs/')).toBe(true);
      expect(f.split('/')).toHaveLength(6);
    }
    expect(siteFile('/runs/r1/report', 'html')).toBe('api/runs/r1/report/_.html');
  });

  it('gives one question one file: query order, empty values, limit, project and the order of compared runs do not count', () => {
    expect(canonicalQuery(new URLSearchParams('target=b&by=target&limit=5&project=&experiment='))).toBe('by=target&target=b');
    expect(siteFile('/compare?runs=b,a')).toBe(siteFile('/compare?runs=a,b'));
    expect(siteFile('/trend?target=x&by=target')).toBe(siteFile('/trend?by=target&target=x'));
    expect(siteFile('/trend?by=target')).not.toBe(siteFile('/trend?by=experiment'));
    expect(siteFile('/runs/a%2Fb')).not.toBe(siteFile('/runs/a/b'));
  });
});
