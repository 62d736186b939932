/**
 * Reading a grading.json whatever wrote it: AgentV's verdict tree (`component_results[]`, what
 * our bundles write since they became AgentV-readable) or skill-creator's expectations (our
 * skill-creator and companion layouts, and bundles written before).
 */
import { isJsonObject } from './json-object.js';

export interface GradingExpectation {
  text: string;
  passed: boolean;
  evidence: string;
}

/** The label AgentV shows for a component: its assertion's value, name, id or type, else its reason. */
export function componentLabel(c: Record<string, unknown>): string {
  const a = isJsonObject(c.assertion) ? c.assertion : {};
  for (const k of ['value', 'name', 'id', 'type']) {
    const v = a[k];
    if (typeof v === 'string' && v.trim().length > 0) return v;
  }
  return typeof c.reason === 'string' ? c.reason : 'grading component';
}

/** Leaf components as assertions, the way `agentv results show` lists them. */
export function componentLeaves(components: unknown): GradingExpectation[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((c) => {
    if (!isJsonObject(c)) return [];
    const nested = componentLeaves(c.component_results);
    return nested.length > 0 ? nested : [{ text: componentLabel(c), passed: c.pass === true, evidence: typeof c.reason === 'string' ? c.reason : '' }];
  });
}

/** A list of assertions as documents hold them (`{text, passed, evidence}`), each field read defensively. */
export function expectationList(list: unknown[]): GradingExpectation[] {
  return list
    .filter(isJsonObject)
    .map((e) => ({ text: String(e.text ?? ''), passed: e.passed === true, evidence: typeof e.evidence === 'string' ? e.evidence : '' }));
}

/** The expectations a grading.json holds (null when it is not a grading document). */
export function gradingExpectations(grading: unknown): GradingExpectation[] | null {
  if (!isJsonObject(grading)) return null;
  if (Array.isArray(grading.expectations)) return expectationList(grading.expectations);
  if (Array.isArray(grading.component_results)) return componentLeaves(grading.component_results);
  return null;
}

/**
 * A test's own assertions, each with its pass/fail and evidence: the one definition `failures`, the
 * HTML report and the Dashboard's drill-down list. Our result.json keeps them as `expectations`
 * (what the index row's `assertions_summary` counts), whether or not a grader owns each; grading.json
 * is AgentV's tree, one component per grader, whose leaves are the graders' own checks, so it is
 * read only for a bundle without our result.json (older bundles, skill-creator layouts). Null when
 * neither document holds assertions.
 */
export function testAssertions(result: unknown, grading: unknown): GradingExpectation[] | null {
  if (isJsonObject(result) && Array.isArray(result.expectations)) return expectationList(result.expectations);
  return gradingExpectations(grading);
}
