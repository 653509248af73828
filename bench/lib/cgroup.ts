// A memory cgroup for a server under test: a container's memory limit without a container engine, so that
// a benchmark can measure what a user who sizes a container by its figures gets (whether the kernel kills
// the process under load, and at what req/s it serves). The process is started inside it (startChild's
// `cgroup`: a shell writes its own pid into the group, then execs the server), so that Node.js and V8 see
// the limit from their first instruction, as in a container. Needs root and a writable cgroup file system:
// the memory controller of cgroup v2 (`/sys/fs/cgroup/cgroup.controllers`), else cgroup v1's
// (`/sys/fs/cgroup/memory`).
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { round1 } from './children.ts';

export interface MemoryCgroup {
  /** The group's directory: startChild's `cgroup` option. */
  dir: string;
  version: 1 | 2;
  limitMiB: number;
  /** The most the group has used (its processes' memory and the page cache charged to it), in MiB. */
  peakMiB(): number | null;
  /** How many processes of the group the kernel has killed for want of memory. */
  oomKills(): number;
  /** Removes the group (once its processes have ended). */
  remove(): void;
}

const MiB = 2 ** 20;

function readNumber(file: string): number | null {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/** The value of `key` in a flat keyed file (`memory.events`, `memory.oom_control`). */
function keyed(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${key} `));
    return line ? Number(line.split(' ')[1]) : 0;
  } catch {
    return 0;
  }
}

/** The group at `dir`, whose peak use and OOM kills are read from the files its cgroup version names. */
function groupAt(
  dir: string,
  version: 1 | 2,
  limitMiB: number,
  files: { peak: string; events: string },
): MemoryCgroup {
  // oom_kill counts over the group's life: a group left by an earlier run starts from its count.
  const killedBefore = keyed(join(dir, files.events), 'oom_kill');
  return {
    dir,
    version,
    limitMiB,
    peakMiB: () => {
      const peak = readNumber(join(dir, files.peak));
      return peak === null ? null : round1(peak / MiB);
    },
    oomKills: () => keyed(join(dir, files.events), 'oom_kill') - killedBefore,
    remove: () => rmdirSync(dir),
  };
}

/** Creates a memory cgroup named `name` limited to `limitMiB` (no swap beyond it); throws saying why not. */
export function createMemoryCgroup(name: string, limitMiB: number): MemoryCgroup {
  const bytes = String(Math.round(limitMiB * MiB));
  const v2 = '/sys/fs/cgroup/cgroup.controllers';
  try {
    if (existsSync(v2) && readFileSync(v2, 'utf8').split(/\s+/).includes('memory')) {
      const dir = join('/sys/fs/cgroup', name);
      writeFileSync('/sys/fs/cgroup/cgroup.subtree_control', '+memory');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'memory.max'), bytes);
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
      return groupAt(dir, 2, limitMiB, { peak: 'memory.peak', events: 'memory.events' });
    }
    const root = '/sys/fs/cgroup/memory';
    if (!existsSync(join(root, 'cgroup.procs'))) throw new Error('no memory controller is mounted');
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    const swap = join(dir, 'memory.memsw.limit_in_bytes');
    if (existsSync(swap)) writeFileSync(swap, bytes);
    writeFileSync(join(dir, 'memory.max_usage_in_bytes'), '0');
    return groupAt(dir, 1, limitMiB, { peak: 'memory.max_usage_in_bytes', events: 'memory.oom_control' });
  } catch (error) {
    throw new Error(
      `--memory-limit needs a memory cgroup this process may create (root, a writable /sys/fs/cgroup): ${
        (error as Error).message
      }`,
    );
  }
}
