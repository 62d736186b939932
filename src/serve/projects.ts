/** The `projects[]` entries of `.agentv/config.yaml` (id and path), for the project picker. */
import { findConfigFile } from '../repo/config.js';
import type { TargetOptions } from '../repo/target.js';
import { resolve } from 'node:path';
import { readRegularText, unreadableFile } from '../util/safe-open.js';
import { isAbsent } from '../errors/errors.js';
import { yamlParser } from '../util/yaml.js';

export interface ProjectEntry {
  id: string;
  path: string | null;
}

export async function listProjects(base: TargetOptions): Promise<{ config: string | null; projects: ProjectEntry[] }> {
  const cwd = base.cwd ?? process.cwd();
  const file = base.configFile ? resolve(cwd, base.configFile) : await findConfigFile(cwd);
  if (!file) return { config: null, projects: [] };
  // absent: removed since it was found, no projects; one that cannot be read is said (a 400 naming it), never an empty picker
  const text = await readRegularText(file, { kind: 'config' }).catch((err: unknown) => {
    if (isAbsent(err)) return null;
    throw unreadableFile(file, {}, err);
  });
  if (text === null) return { config: null, projects: [] };
  let doc: unknown;
  try {
    const parse = await yamlParser();
    doc = parse(text);
  } catch {
    // unparsable: loadResultsConfig reports the broken YAML on the first real request; the picker just stays empty
    return { config: file, projects: [] };
  }
  const raw = doc && typeof doc === 'object' ? (doc as { projects?: unknown }).projects : undefined;
  if (!Array.isArray(raw)) return { config: file, projects: [] };
  const projects: ProjectEntry[] = [];
  for (const p of raw) {
    if (p && typeof p === 'object' && typeof (p as { id?: unknown }).id === 'string') {
      const path = (p as { path?: unknown }).path;
      projects.push({ id: (p as { id: string }).id, path: typeof path === 'string' ? path : null });
    }
  }
  return { config: file, projects };
}
