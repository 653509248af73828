// `tally log groups|forget-group` on the embedded record log of a running gateway: the groups retention
// waits for, and forgetting one that no consumer uses any more.
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { FileTokenStore } from '@tally/tokens';
import { expect, it } from 'vitest';
import { postIngest, startGatewayProcess, tally, tempDataDir } from './support/processes.ts';

it('lists the consumer groups of a running gateway’s log and forgets one', async () => {
  const dataDir = tempDataDir();
  const token = (await new FileTokenStore(dataDir).create('cli', 'public')).token;
  const gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir });
  try {
    for (let i = 0; i < 5; i++) {
      const res = await postIngest(gateway.url, { type: 'pageview', data: { session_id: `s${i}` } }, token);
      expect(res.status).toBe(202);
    }
    // A consumer that read two records, committed, and was never run again.
    const log = openEmbeddedLog({ path: join(dataDir, 'log') });
    const consumer = log.consumer({ group: 'old-dashboard', topics: ['pageview'] });
    await consumer.commit(await consumer.poll({ max: 2 }));
    await log.close();

    const env = { TALLY_DATA_DIR: dataDir };
    expect(JSON.parse(await tally(['log', 'groups', '--json'], env))).toEqual([
      { group: 'old-dashboard', topic: 'pageview', position: 2, lag: 3 },
    ]);
    expect(await tally(['log', 'groups'], env)).toMatch(/^old-dashboard\s+pageview\s+position 2 {2}lag 3$/m);
    expect(await tally(['log', 'forget-group', 'old-dashboard'], env)).toContain(
      'Forgot consumer group old-dashboard',
    );
    expect(JSON.parse(await tally(['log', 'groups', '--json'], env))).toEqual([]);
    await expect(tally(['log', 'forget-group', 'old-dashboard'], env)).rejects.toThrow(
      'no consumer group "old-dashboard"',
    );
    // The gateway kept its lock and keeps accepting.
    expect(
      (await postIngest(gateway.url, { type: 'pageview', data: { session_id: 'x' } }, token)).status,
    ).toBe(202);
  } finally {
    expect(await gateway.stop('SIGTERM')).toBe(0);
  }
});
