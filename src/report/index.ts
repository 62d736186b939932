/** The `report` library API: self-contained HTML reports of run workspaces. */
export { generateReport, DEFAULT_REPORT_NAME, ReportOptionsSchema, type ReportOptions, type ReportResult } from './generate.js';
export { projectRun, type Projection, type ProjectionOptions } from './projection.js';
export { computeStats, type ReportStats, type Tally } from './stats.js';
export { renderReport, CONTENT_SECURITY_POLICY, type TemplateInput } from './template.js';
export { escapeHtml, jsonForScript } from './escape.js';
export { SecretScanner, secretKinds, SECRET_LABELS, type SecretKind } from './secrets.js';
export { histogramBins, histogramBarHeight, barWidth, scoreHistogram, targetPassRateChart, type TargetBar } from './charts.js';
export { DEFAULT_FIELD_CHARS, DEFAULT_TEST_CHARS, TextBudget } from './text.js';
export type * from './types.js';
