// The README's "Sending records" block, run as a user would copy it (bash, curl, the tally CLI) against
// `npm start`'s process: every request answers 202, and the revenue it sends ends attributed to the channel
// of the visit that brought the customer (Email: the pageview's utm_source is a newsletter), not
// "(unattributed)" — the identify from the browser links the customer to its cookieless visitor.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const run = promisify(execFile);

/** The README's first shell block after its "Sending records" heading, as two parts: the sends, the reads. */
function readmeBlock(): { sends: string; reads: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Sending records'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no shell block under "## Sending records" in README.md');
  const split = block.indexOf('# what landed');
  if (split < 0) throw new Error('the block has no "# what landed" part');
  return { sends: block.slice(0, split), reads: block.slice(split) };
}

describe("the README's Sending records example", () => {
  let dataDir: string;
  let running: TallyProcess;
  const env = () => pipelineEnv({ TALLY_DATA_DIR: dataDir });
  /** Runs a part of the block in bash: this process's gateway for localhost:8080, the repository's CLI. */
  const bash = async (script: string) => {
    const local = script
      .replaceAll('http://localhost:8080', running.url)
      .replaceAll('npx tally', `node ${join(ROOT, 'packages/cli/bin/tally.js')}`);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', local], {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TALLY_ENV_FILE: '/dev/null', ...env() },
      timeout: 60_000,
    });
    return stdout;
  };

  beforeAll(async () => {
    dataDir = tempDataDir();
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('answers 202 to every request, and attributes the revenue to the channel of the visit', async () => {
    const { sends, reads } = readmeBlock();
    const answers = (await bash(sends)).match(/HTTP\/1\.1 \d+/g) ?? [];
    expect(answers).toEqual(Array(5).fill('HTTP/1.1 202'));
    // Once both consumer groups have taken every record, the reads are final.
    await eventually(60_000, 'every record landed', async () => {
      const groups = JSON.parse(await tally(['log', 'groups', '--json'], env())) as { lag: number }[];
      return groups.length > 0 && groups.every((g) => g.lag === 0);
    });
    const printed = await bash(reads);
    expect(printed).toMatch(/^Email\s+1\s+1\s+49\.00\s/m);
    expect(printed).not.toContain('(unattributed)');
  });
});
