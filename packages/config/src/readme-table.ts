// The README's configuration table, generated from the config schema (npm run docs:generate) so that the
// two cannot disagree; a test checks that the README holds exactly this table.
import { ConfigSchema } from './index.ts';

export const TABLE_START =
  '<!-- configuration table: generated from packages/config by npm run docs:generate -->';
export const TABLE_END = '<!-- end of the configuration table -->';

/** The Markdown table of every setting: its name, its default, and its description. */
export function configurationTable(): string {
  const rows = Object.entries(ConfigSchema.properties).map(([key, schema]) => {
    const { default: value, description } = schema as { default?: unknown; description?: string };
    const shown = value === undefined ? '—' : value === '' ? '(none)' : `\`${String(value)}\``;
    return `| \`${key}\` | ${shown} | ${(description ?? '').replaceAll('|', '\\|')} |`;
  });
  return ['| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `readme` with its configuration table (between the markers) replaced by `table`. */
export function withConfigurationTable(readme: string, table: string = configurationTable()): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('README.md has no configuration table markers');
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}
