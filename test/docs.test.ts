// Docs that match the behaviour: the README's configuration table is the one the config schema gives
// (npm run docs:generate writes it), so every setting is there with its default and its description.
import { readFileSync } from 'node:fs';
import { configurationTable, withConfigurationTable } from '@tally/config/readme-table';
import { expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

it('holds the configuration table the config schema gives (npm run docs:generate)', () => {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  expect(readme).toBe(withConfigurationTable(readme));
  expect(readme).toContain('| `TALLY_READY_FILE` | — |');
  expect(readme).toContain('| `PORT` | `8080` | Port of the public ingest API. |');
  expect(configurationTable().split('\n').length).toBeGreaterThan(30);
});
