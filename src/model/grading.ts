/**
 * Reading a grading.json whatever wrote it: AgentV's verdict tree (`component_results[]`, what
 * our bundles write since they became AgentV-readable) or skill-creator's expectations (our
 * skill-creator and companion layouts, and bundles written before).
 */
export interface GradingExpectation {
  text: string;
  passed: boolean;
  evidence: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The label AgentV shows for a component: its assertion's value, name, id or type, else its reason. */
export function componentLabel(c: Record<string, unknown>): string {
  const a = isObject(c.assertion) ? c.assertion : {};
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
    if (!isObject(c)) return [];
    const nested = componentLeaves(c.component_results);
    return nested.length > 0 ? nested : [{ text: componentLabel(c), passed: c.pass === true, evidence: typeof c.reason === 'string' ? c.reason : '' }];
  });
}

/** The expectations a grading.json holds (null when it is not a grading document). */
export function gradingExpectations(grading: unknown): GradingExpectation[] | null {
  if (!isObject(grading)) return null;
  if (Array.isArray(grading.expectations)) {
    return grading.expectations
      .filter(isObject)
      .map((e) => ({ text: String(e.text ?? ''), passed: e.passed === true, evidence: typeof e.evidence === 'string' ? e.evidence : '' }));
  }
  if (Array.isArray(grading.component_results)) return componentLeaves(grading.component_results);
  return null;
}
