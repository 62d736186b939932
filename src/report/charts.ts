/**
 * Inline SVG charts, rendered on the server side as markup: they need no script, so they show
 * while the rest of the page is still loading. Every label from data goes through escapeHtml;
 * shapes use presentation attributes (x, width, class) rather than `style=` attributes, which
 * the report's Content-Security-Policy would block. Geometry is rounded to 0.1 px so the same
 * input always gives the same bytes.
 */
import { escapeHtml } from './escape.js';
import { fmtInt, fmtPct } from './format.js';

export interface TargetBar {
  name: string;
  passed: number;
  total: number;
}

const r1 = (n: number) => Math.round(n * 10) / 10;

function ellipsize(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + '…';
}

export const BAR_CHART = { width: 580, labelWidth: 170, valueWidth: 120, rowHeight: 26, barHeight: 16, maxRows: 40 } as const;

/** Width in px of a pass-rate bar. */
export function barWidth(passed: number, total: number, max = BAR_CHART.width - BAR_CHART.labelWidth - BAR_CHART.valueWidth): number {
  if (total <= 0) return 0;
  return r1((Math.min(Math.max(passed, 0), total) / total) * max);
}

/** Horizontal pass-rate bars, one per target (the first `maxRows`; a note says how many more). */
export function targetPassRateChart(bars: TargetBar[]): string {
  const { width, labelWidth, valueWidth, rowHeight, barHeight, maxRows } = BAR_CHART;
  const shown = bars.slice(0, maxRows);
  const more = bars.length - shown.length;
  const height = Math.max(1, shown.length + (more > 0 ? 1 : 0)) * rowHeight + 4;
  const track = width - labelWidth - valueWidth;
  const parts: string[] = [
    `<svg class="chart" id="chart-targets" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Pass rate per target">`,
  ];
  shown.forEach((b, i) => {
    const y = i * rowHeight + 4;
    const rate = b.total === 0 ? 0 : b.passed / b.total;
    const w = barWidth(b.passed, b.total, track);
    parts.push(
      `<g class="bar-row" data-target="${escapeHtml(b.name)}" data-passed="${b.passed}" data-total="${b.total}">`,
      `<title>${escapeHtml(b.name)}: ${b.passed}/${b.total} passed (${fmtPct(rate)})</title>`,
      `<text class="label" x="${labelWidth - 8}" y="${y + barHeight - 3}" text-anchor="end">${escapeHtml(ellipsize(b.name, 24))}</text>`,
      `<rect class="track" x="${labelWidth}" y="${y}" width="${track}" height="${barHeight}" rx="3"/>`,
      `<rect class="bar ${rate >= 0.8 ? 'good' : rate >= 0.5 ? 'mid' : 'bad'}" x="${labelWidth}" y="${y}" width="${w}" height="${barHeight}" rx="3"/>`,
      `<text class="value" x="${labelWidth + track + 8}" y="${y + barHeight - 3}">${fmtPct(rate)} (${fmtInt(b.passed)}/${fmtInt(b.total)})</text>`,
      `</g>`,
    );
  });
  if (bars.length === 0) parts.push(`<text class="value" x="8" y="${rowHeight - 8}">No tests</text>`);
  if (more > 0)
    parts.push(
      `<text class="value" x="${labelWidth}" y="${shown.length * rowHeight + rowHeight - 8}">… and ${more} more target${more === 1 ? '' : 's'}</text>`,
    );
  parts.push('</svg>');
  return parts.join('');
}

/**
 * Score counts in `bins` equal bins over [0, 1]; the last bin includes 1. Scores outside [0, 1]
 * are clamped into the end bins and non-finite scores are ignored.
 */
export function histogramBins(scores: readonly number[], bins = 10): number[] {
  const counts = new Array<number>(bins).fill(0);
  for (const s of scores) {
    if (!Number.isFinite(s)) continue;
    const i = Math.min(bins - 1, Math.max(0, Math.floor(s * bins)));
    counts[i]!++;
  }
  return counts;
}

export const HISTOGRAM = { width: 580, height: 200, padLeft: 40, padBottom: 28, padTop: 18 } as const;

/** Bar height in px for `count` when the tallest bin holds `max`. */
export function histogramBarHeight(count: number, max: number, plot = HISTOGRAM.height - HISTOGRAM.padBottom - HISTOGRAM.padTop): number {
  return max <= 0 ? 0 : r1((count / max) * plot);
}

export function scoreHistogram(scores: readonly number[], bins = 10): string {
  const { width, height, padLeft, padBottom, padTop } = HISTOGRAM;
  const counts = histogramBins(scores, bins);
  const max = Math.max(0, ...counts);
  const plotW = width - padLeft - 8;
  const plotH = height - padBottom - padTop;
  const slot = plotW / bins;
  const baseline = height - padBottom;
  const parts: string[] = [
    `<svg class="chart" id="chart-scores" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Score distribution">`,
    `<line class="axis" x1="${padLeft}" y1="${baseline}" x2="${width - 8}" y2="${baseline}"/>`,
  ];
  counts.forEach((count, i) => {
    const lo = i / bins;
    const hi = (i + 1) / bins;
    const h = histogramBarHeight(count, max, plotH);
    const x = r1(padLeft + i * slot + 2);
    const range = `${lo.toFixed(1)}–${hi.toFixed(1)}${i === bins - 1 ? ' (inclusive)' : ''}`;
    parts.push(
      `<g class="bin" data-bin="${i}" data-count="${count}">`,
      `<title>score ${range}: ${fmtInt(count)} test${count === 1 ? '' : 's'}</title>`,
      `<rect class="bar ${hi <= 0.5 ? 'bad' : hi <= 0.8 ? 'mid' : 'good'}" x="${x}" y="${r1(baseline - h)}" width="${r1(slot - 4)}" height="${h}"/>`,
      count > 0 ? `<text class="value" x="${r1(x + (slot - 4) / 2)}" y="${r1(baseline - h - 4)}" text-anchor="middle">${fmtInt(count)}</text>` : '',
      `</g>`,
    );
  });
  for (let i = 0; i <= bins; i += bins / 2) {
    parts.push(`<text class="tick" x="${r1(padLeft + i * slot)}" y="${baseline + 16}" text-anchor="middle">${(i / bins).toFixed(1)}</text>`);
  }
  parts.push(`<text class="tick" x="${padLeft - 6}" y="${padTop + 4}" text-anchor="end">${fmtInt(max)}</text>`, '</svg>');
  return parts.join('');
}
