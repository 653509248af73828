// The reports' conformance suite on chDB, in this process: one data directory for the file (chDB binds one
// per process), a database per test. (On a ClickHouse engine: test/warehouse-clickhouse.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChdbWarehouse } from '@tally/warehouse';
import { afterAll } from 'vitest';
import { describeReportsConformance } from './conformance.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-chdb-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describeReportsConformance('chDB (embedded)', (database) => openChdbWarehouse({ dataDir, database }));
