/**
 * Publishing configuration: the `results` block of `.agentv/config.yaml` (AgentV's results docs), then
 * environment variables, then command-line flags, each overriding the one before.
 *
 *   results:
 *     repo: origin                  # a URL, or the name of an existing remote
 *     path: .                       # a local checkout (default: the current repository)
 *     branch: agentv/results/v1
 *     artifacts_branch: agentv/artifacts/v1
 *     remote: origin
 *     auto_push: true
 *     require_push: false
 *     heavy_threshold_bytes: 262144
 *     archive:                      # `archive` (and the daemon's --archive-every): the live window
 *       keep_days: 30
 *       keep_runs: 200
 *       max_listing_bytes: 786432   # what AgentV's Dashboard lists (1 MiB buffer) stays under this
 *     retention:                    # `expire`: what is deleted (live and archive); off unless set
 *       keep_days: 365
 *       keep_runs: 5000
 *       keep_tags: [baseline]
 *
 *     layout: auto                  # which AgentV's branch layout a publish writes: next (5.x:
 *                                   #   runs at the root), stable (4.42: runs/<exp>/<ts>/), auto
 *                                   #   (the layout the branch's runs already use; next when none)
 *
 * AgentV 4.42's own names are accepted too: `repo_path` for `path`, `repo_url` for `repo` (4.42
 * reads `repo_url`/`repo` and `repo_path`, and warns about a relative `path`; 5.x reads `repo` and
 * `path` and ignores the 4.42 names). Both spellings of one checkout may stand side by side.
 *
 *   projects:                       # optional: per-project blocks (AgentV's results docs: `projects[].results`)
 *     - id: web                     # chosen with --project web or AGENTV_PROJECT=web, or
 *       path: apps/web              #   by running inside this directory (the deepest match wins)
 *       results: { branch: agentv/results/web }
 *
 * A project's `results` keys override the top-level ones; keys it does not set are inherited.
 */
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import * as z from 'zod';
import { parseOptions, TargetFields } from '../options/verb-options.js';
import { yamlParser } from '../util/yaml.js';
import { readRegularText } from '../util/safe-open.js';
import { UnsafeFileError } from '../errors/input-error.js';
import { refSettingProblem } from './ref-settings.js';
import { ConfigError } from '../errors/publish-errors.js';
import { isAbsent } from '../errors/errors.js';

export const DEFAULT_RESULTS_BRANCH = 'agentv/results/v1';
export const DEFAULT_ARTIFACTS_BRANCH = 'agentv/artifacts/v1';
export const DEFAULT_HEAVY_THRESHOLD = 256 * 1024;

const branchName = z
  .string()
  .regex(/^[A-Za-z0-9._/-]+$/, 'a branch name of letters, digits, ".", "_", "-" and "/"')
  .refine((b) => !b.startsWith('/') && !b.endsWith('/') && !b.includes('..') && !b.includes('//') && !b.startsWith('-'), 'not a valid branch name');

const keepCount = z.number().int().min(0);

/** The live window of `archive`: runs past it move to the month archive branches. */
export const ArchiveConfigSchema = z.strictObject({
  keep_days: keepCount.optional(),
  keep_runs: keepCount.optional(),
  /** The live branch's `git ls-tree -r --name-only` stays at most this size (AgentV's Dashboard reads it into 1 MiB); 0: no limit. */
  max_listing_bytes: keepCount.optional(),
});

/**
 * The retention policy of `expire`: a run is kept when ANY rule keeps it (within keep_days, among
 * the keep_runs newest, or tagged with one of keep_tags); the rest are deleted in ordinary commits.
 * A policy with neither an age nor a count would keep only tagged runs: refused as a likely mistake.
 */
export const RetentionConfigSchema = z
  .strictObject({
    keep_days: keepCount.optional(),
    keep_runs: keepCount.optional(),
    keep_tags: z.array(z.string().min(1)).optional(),
  })
  .refine((r) => r.keep_days !== undefined || r.keep_runs !== undefined, 'set keep_days or keep_runs (a policy with neither would delete every untagged run)');

/** Names of environment variables: the config file never holds a secret, only where to find one. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable');

/**
 * `object_store` (AgentV's results-storage plan, snake_case): where `storage_mode: hybrid` puts heavy
 * payloads. Credentials come from environment variables (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 * unless `credentials` names others); a literal key in the file is refused.
 */
export const ObjectStoreConfigSchema = z.strictObject({
  endpoint: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')
    .optional(),
  region: z.string().min(1).default('us-east-1'),
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name (3-63 lowercase letters, digits, "." and "-")'),
  prefix: z
    .string()
    .regex(/^([A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*)?$/, 'a key prefix of letters, digits, ".", "_", "-" and "/"')
    .refine((p) => !p.split('/').includes('..'), 'not a valid key prefix')
    .default('agentv'),
  force_path_style: z.boolean().default(false),
  /** How long an upload keeps retrying a bucket that is unreachable or failing before publish gives up (default 60). */
  retry_seconds: z.number().min(0).max(3600).optional(),
  credentials: z
    .strictObject({
      access_key_id_env: envName.default('AWS_ACCESS_KEY_ID'),
      secret_access_key_env: envName.default('AWS_SECRET_ACCESS_KEY'),
      session_token_env: envName.optional(),
    })
    .default({ access_key_id_env: 'AWS_ACCESS_KEY_ID', secret_access_key_env: 'AWS_SECRET_ACCESS_KEY' }),
});
export type ObjectStoreConfig = z.infer<typeof ObjectStoreConfigSchema>;

export const STORAGE_MODES = ['git-native', 'hybrid'] as const;

export const ResultsConfigSchema = z.strictObject({
  repo: z.string().min(1).optional(),
  path: z.string().min(1).optional(),
  branch: branchName.default(DEFAULT_RESULTS_BRANCH),
  artifacts_branch: branchName.default(DEFAULT_ARTIFACTS_BRANCH),
  /** Allow branch names outside `agentv/` (never the checked-out branch or one with a history of its own). */
  allow_branch_outside_agentv: z.boolean().default(false),
  remote: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'a remote name')
    .optional(),
  auto_push: z.boolean().default(false),
  require_push: z.boolean().default(false),
  heavy_threshold_bytes: z.number().int().positive().default(DEFAULT_HEAVY_THRESHOLD),
  archive: ArchiveConfigSchema.optional(),
  retention: RetentionConfigSchema.optional(),
  layout: z.enum(['auto', 'next', 'stable']).default('auto'),
  /** AgentV's storage modes: `git-native` (default) keeps payloads on the artifacts branch; `hybrid` in `object_store`. */
  storage_mode: z.enum(STORAGE_MODES).default('git-native'),
  object_store: ObjectStoreConfigSchema.optional(),
});
export type ResultsConfig = z.infer<typeof ResultsConfigSchema>;

// Other keys of a project entry (name, targets, …) belong to AgentV and are left alone.
const ProjectSchema = z.looseObject({
  id: z.string().min(1),
  path: z.string().min(1).optional(),
  results: z.record(z.string(), z.unknown()).nullish(),
});
type Project = z.infer<typeof ProjectSchema>;

function parseProjects(raw: unknown, file: string): Project[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ConfigError(`${file}: projects: expected a list`);
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const parsed = ProjectSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigError(`${file}: projects[${i}]${issue.path.length ? '.' + issue.path.join('.') : ''}: ${issue.message}`);
    }
    if (seen.has(parsed.data.id)) throw new ConfigError(`${file}: projects[${i}].id: ${JSON.stringify(parsed.data.id)} appears twice`);
    seen.add(parsed.data.id);
    return parsed.data;
  });
}

/** The named project, else the one whose `path` holds `cwd` most closely, else none. */
function selectProject(projects: Project[], wanted: string | undefined, cwd: string, baseDir: string, file: string | null): Project | null {
  if (wanted !== undefined) {
    const hit = projects.find((p) => p.id === wanted);
    if (!hit) {
      const known = projects.length ? `known: ${projects.map((p) => p.id).join(', ')}` : 'it declares no projects';
      throw new ConfigError(`${file ?? 'configuration'}: no project ${JSON.stringify(wanted)} (${known})`, { notFound: true });
    }
    return hit;
  }
  let best: { project: Project; depth: number } | null = null;
  for (const project of projects) {
    if (!project.path) continue;
    const root = resolve(baseDir, project.path);
    const rel = relative(root, resolve(cwd));
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    const depth = root.split(sep).length;
    if (!best || depth > best.depth) best = { project, depth };
  }
  return best?.project ?? null;
}

/** Find `.agentv/config.yaml` from `start` upward; null when there is none. */
export async function findConfigFile(start: string): Promise<string | null> {
  let dir = resolve(start);
  for (;;) {
    for (const name of ['config.yaml', 'config.yml']) {
      const candidate = join(dir, '.agentv', name);
      // Only looked at, never read here: a pipe or a link to a device is found, and then refused by
      // the one opener when the config is read (exit 2), instead of blocking this search.
      const found = await stat(candidate).then(
        () => true,
        (err: unknown) => {
          // absent: look further up; anything else (a .agentv we may not look into, a loop of links) is a ConfigError, never "no configuration"
          if (isAbsent(err)) return false;
          throw new ConfigError(`${candidate}: cannot look at it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { file: candidate });
        },
      );
      if (found) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const bool = (name: string, key: string) => {
    const v = env[name];
    if (v === undefined || v === '') return;
    if (/^(1|true|yes|on)$/i.test(v)) out[key] = true;
    else if (/^(0|false|no|off)$/i.test(v)) out[key] = false;
    else throw new ConfigError(`${name}=${v}: expected true or false`);
  };
  const str = (name: string, key: string) => {
    if (env[name]) out[key] = env[name];
  };
  str('AGENTV_RESULTS_REPO', 'repo');
  str('AGENTV_RESULTS_PATH', 'path');
  str('AGENTV_RESULTS_BRANCH', 'branch');
  str('AGENTV_RESULTS_ARTIFACTS_BRANCH', 'artifacts_branch');
  str('AGENTV_RESULTS_REMOTE', 'remote');
  bool('AGENTV_RESULTS_AUTO_PUSH', 'auto_push');
  bool('AGENTV_RESULTS_REQUIRE_PUSH', 'require_push');
  str('AGENTV_RESULTS_LAYOUT', 'layout');
  if (env.AGENTV_RESULTS_HEAVY_THRESHOLD_BYTES) out.heavy_threshold_bytes = Number(env.AGENTV_RESULTS_HEAVY_THRESHOLD_BYTES);
  str('AGENTV_RESULTS_STORAGE_MODE', 'storage_mode');
  // AgentV's plan names these for the object tier; each overrides its key of `object_store`.
  const store: Record<string, unknown> = {};
  for (const [name, key] of [
    ['AGENTV_RESULTS_S3_ENDPOINT', 'endpoint'],
    ['AGENTV_RESULTS_S3_BUCKET', 'bucket'],
    ['AGENTV_RESULTS_S3_PREFIX', 'prefix'],
    ['AGENTV_RESULTS_S3_REGION', 'region'],
  ] as const)
    if (env[name]) store[key] = env[name];
  const retry = env.AGENTV_RESULTS_S3_RETRY_SECONDS;
  if (retry) {
    if (!/^\d+(\.\d+)?$/.test(retry.trim())) throw new ConfigError(`AGENTV_RESULTS_S3_RETRY_SECONDS=${retry}: expected a number of seconds`);
    store.retry_seconds = Number(retry);
  }
  if (Object.keys(store).length > 0) out.object_store = store;
  return out;
}

export interface LoadedConfig {
  config: ResultsConfig;
  /** The config file read, if any (for messages). */
  file: string | null;
  /** Directory relative paths in the file resolve against (the folder holding `.agentv/`). */
  baseDir: string;
  /** The `projects[]` entry whose `results` block applies, if any. */
  project: string | null;
}

/** `loadResultsConfig`'s options, parsed at its door: the target fields that say which configuration applies. */
export const LoadConfigOptionsSchema = z.strictObject({
  cwd: TargetFields.cwd,
  env: TargetFields.env,
  overrides: TargetFields.overrides,
  configFile: TargetFields.configFile,
  project: TargetFields.project,
});

/** What a caller of `loadResultsConfig` passes. */
export type LoadConfigOptions = z.input<typeof LoadConfigOptionsSchema>;

/** Read `.agentv/config.yaml`'s `results` settings (with the environment's and the caller's overrides) for a directory. */
export async function loadResultsConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const opts = parseOptions('loadResultsConfig', LoadConfigOptionsSchema, options);
  const cwd = opts.cwd;
  const env: NodeJS.ProcessEnv = opts.env ?? process.env;
  const file = opts.configFile ? resolve(cwd, opts.configFile) : await findConfigFile(cwd);
  const baseDir = file ? dirname(dirname(file)) : cwd;
  const wanted = opts.project ?? (env.AGENTV_PROJECT || undefined);
  let fromFile: Record<string, unknown> = {};
  let project: Project | null = null;
  if (file) {
    let doc: unknown;
    // Loaded only when there is a file to parse (util/yaml.ts).
    const parseYaml = await yamlParser();
    let text: string;
    try {
      text = await readRegularText(file, { kind: 'config', label: opts.configFile ? `--config ${file}` : file });
    } catch (err) {
      // A pipe, socket, device or oversized file: a configuration error like any other (exit 2).
      if (err instanceof UnsafeFileError) throw new ConfigError(err.message, { file });
      throw new ConfigError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { file });
    }
    try {
      doc = parseYaml(text);
    } catch (err) {
      throw new ConfigError(`${file}: not valid YAML (${(err as Error).message.split('\n')[0]})`, { file });
    }
    if (doc !== null && doc !== undefined) {
      if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${file}: expected a mapping at the top level`);
      const results = (doc as Record<string, unknown>).results;
      if (results !== undefined && results !== null) {
        if (typeof results !== 'object' || Array.isArray(results)) throw new ConfigError(`${file}: results: expected a mapping`);
        fromFile = results as Record<string, unknown>;
      }
      project = selectProject(parseProjects((doc as Record<string, unknown>).projects, file), wanted, cwd, baseDir, file);
      if (project?.results) fromFile = { ...fromFile, ...project.results };
    }
  }
  if (wanted !== undefined && project === null)
    throw new ConfigError(`no project ${JSON.stringify(wanted)}: ${file ? `${file} declares no projects` : 'no .agentv/config.yaml found'}`, {
      notFound: true,
    });
  const envBlock = fromEnv(env);
  const fileBlock = stableAliases(fromFile, file, baseDir);
  refuseLiteralSecrets(fileBlock.object_store, file);
  const merged: Record<string, unknown> = { ...fileBlock, ...envBlock, ...stripUndefined(opts.overrides ?? {}) };
  // The environment's object_store keys override the file's one by one, not the whole block.
  if (envBlock.object_store && fileBlock.object_store && typeof fileBlock.object_store === 'object')
    merged.object_store = { ...(fileBlock.object_store as object), ...(envBlock.object_store as object) };
  // A retry budget alone (set for every job of a CI) configures no object store.
  else if (envBlock.object_store && Object.keys(envBlock.object_store as object).join() === 'retry_seconds') merged.object_store = fileBlock.object_store;
  const badRef = refSettingProblem(merged, { file, project, fileBlock, envBlock, overrides: stripUndefined(opts.overrides ?? {}) });
  if (badRef) throw new ConfigError(badRef);
  const parsed = ResultsConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // Point at the block the bad key came from: the project's, when it set that key.
    const inProject = project?.results && issue.path.length > 0 && String(issue.path[0]) in project.results;
    const block = inProject ? `projects[id=${project!.id}].results` : 'results';
    const key = issue.path.length > 0 ? `${block}.${issue.path.join('.')}` : block;
    const where = file ? `${file}: ` : '';
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown key(s) ${(issue as { keys: string[] }).keys
            .map(
              (k) =>
                `${project?.results && String(issue.path[0] ?? k) in project.results ? `projects[id=${project.id}].results` : 'results'}.${[...issue.path, k].join('.')}`,
            )
            .join(', ')}`
        : `${key}: ${issue.message}`;
    throw new ConfigError(`${where}${message}`);
  }
  if (parsed.data.storage_mode === 'hybrid' && parsed.data.object_store === undefined)
    throw new ConfigError(
      `${file ? `${file}: ` : ''}results.storage_mode is hybrid but results.object_store is not set (endpoint, region, bucket, prefix, force_path_style; credentials from the environment)`,
    );
  if (parsed.data.branch === parsed.data.artifacts_branch)
    throw new ConfigError(`results.branch and results.artifacts_branch must differ (both ${parsed.data.branch})`);
  return { config: parsed.data, file, baseDir, project: project?.id ?? null };
}

/**
 * Secrets never live in the config file (it is committed): a literal key under
 * `object_store.credentials` is refused without repeating its value.
 */
function refuseLiteralSecrets(store: unknown, file: string | null): void {
  if (store === null || typeof store !== 'object') return;
  const creds = (store as Record<string, unknown>).credentials;
  const keys = creds !== null && typeof creds === 'object' ? Object.keys(creds) : [];
  const literal = keys.filter((k) => !k.endsWith('_env'));
  if (literal.length > 0)
    throw new ConfigError(
      `${file ? `${file}: ` : ''}results.object_store.credentials.${literal[0]}: credentials are never read from the config file — name environment variables instead (access_key_id_env, secret_access_key_env, session_token_env)`,
    );
}

/** AgentV 4.42 names the keys `repo_path` and `repo_url`: read as `path` and `repo` (both spellings at once must agree). */
function stableAliases(block: Record<string, unknown>, file: string | null, baseDir: string): Record<string, unknown> {
  const out = { ...block };
  for (const [alias, key] of [
    ['repo_path', 'path'],
    ['repo_url', 'repo'],
  ] as const) {
    if (!(alias in out)) continue;
    // A team running both lines writes both spellings (4.42 reads repo_path, 5.x path): the same
    // checkout, however each is written (`.` and its absolute path), is one setting.
    const same =
      out[key] === out[alias] ||
      (key === 'path' && typeof out[key] === 'string' && typeof out[alias] === 'string' && resolve(baseDir, out[key]) === resolve(baseDir, out[alias]));
    if (key in out && !same)
      throw new ConfigError(
        `${file ? `${file}: ` : ''}results.${alias} and results.${key} name the same setting (AgentV 4.42's and 5.x's spelling) but differ: keep one`,
      );
    if (!(key in out)) out[key] = out[alias];
    delete out[alias];
  }
  return out;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
