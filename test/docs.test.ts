// Docs that match the behaviour: every configuration setting is in the README's table, with its default.
import { readFileSync } from 'node:fs';
import { ConfigSchema } from '@tally/config';
import { expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

it('documents every configuration setting and its default in the README', () => {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${key}\``));
    expect(row, `README.md has no row for ${key}`).toBeDefined();
    const def = (schema as { default?: unknown }).default;
    if (def !== undefined && def !== '') expect(row, `default of ${key}`).toContain(`\`${String(def)}\``);
  }
});
