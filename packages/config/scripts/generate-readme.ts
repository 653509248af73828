// Writes the configuration table of README.md from the config schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigurationTable } from '../src/readme-table.ts';

const README = new URL('../../../README.md', import.meta.url);
writeFileSync(README, withConfigurationTable(readFileSync(README, 'utf8')));
console.log('wrote the configuration table of README.md');
