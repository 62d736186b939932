/**
 * The YAML parser, loaded on first use: it is ~70 modules, a noticeable share of the start-up of
 * every command, and only a configuration file needs it.
 *
 * `yaml` is a CommonJS package. Node's loader gives a dynamic import its named exports; a bundler
 * may hand over `module.exports` as the default export only (the CLI's bundle makes this import a
 * `require`). Both shapes are accepted here, so the library and the shipped CLI read the same
 * configuration.
 */
type YamlModule = typeof import('yaml');

let parser: Promise<YamlModule['parse']> | undefined;

export function yamlParser(): Promise<YamlModule['parse']> {
  parser ??= import('yaml').then((mod) => {
    const parse = mod.parse ?? (mod as unknown as { default?: YamlModule }).default?.parse;
    // A plain Error on purpose: only a broken installation gets here (a bug to report, not an input to fix).
    if (typeof parse !== 'function') throw new Error('the yaml package has no parse function');
    return parse;
  });
  return parser;
}
