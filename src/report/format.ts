/**
 * Number formatting for the report, its server-rendered parts and its page script alike
 * (report/client/). The report must not depend on the CLI layer (src/cli/format.ts sits above
 * it), and its output must not depend on the machine's locale, so the few formatters it needs
 * live here with a fixed `en-US` locale.
 */

export function fmtInt(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

export function fmtPct(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

export function fmtDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function fmtCost(usd: number | null | undefined): string {
  if (usd == null || !Number.isFinite(usd)) return '—';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

export function fmtScore(score: number): string {
  return Number.isFinite(score) ? score.toFixed(2) : '—';
}

export function fmtBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
