// One process appends to an embedded log: offsets are assigned in that process's memory, so a second
// appender on the same directory would overwrite records. The writer holds `writer.lock` in the log's
// directory: created exclusively, holding its pid and the process's start time (so that a reused pid is
// not taken for the holder), removed on close. A lock left by a process that is gone (SIGKILL, a crash,
// a container restart) is taken over at once. Readers and consumers need no lock.
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class EmbeddedLogLockedError extends Error {
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(
      `the embedded record log in ${dir} is being written by another process (pid ${pid}); ` +
        'run one gateway per TALLY_DATA_DIR, or use Kafka (KAFKA_BROKERS) for several',
    );
    this.name = 'EmbeddedLogLockedError';
    this.pid = pid;
  }
}

interface Holder {
  pid: number;
  /** Start time of the process in clock ticks since boot (Linux), null elsewhere. */
  started: string | null;
}

/** Start time of a process from /proc (field 22 of stat); null where /proc is not available. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: no such process
  }
  // The start time tells a reused pid from the holder, our own included: a container's process restarted
  // with the same pid left the lock, another log of this very process holds it.
  const started = startTimeOf(holder.pid);
  return holder.started === null || started === null || started === holder.started;
}

function readHolder(file: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, started: parsed.started ?? null } : null;
  } catch {
    return null; // gone meanwhile, or not a lock of ours
  }
}

/** Takes the writer lock of the log in `dir`; returns its release. Throws EmbeddedLogLockedError if held. */
export function acquireWriterLock(dir: string): () => void {
  const file = join(dir, 'writer.lock');
  const me: Holder = { pid: process.pid, started: startTimeOf(process.pid) };
  // Written to a file of our own, then hard-linked into place: the link appears whole or not at all, and
  // fails if a lock exists, so two starting writers cannot both win.
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, JSON.stringify(me), { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(mine, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
      }
      const holder = readHolder(file);
      if (holder && isRunning(holder)) throw new EmbeddedLogLockedError(dir, holder.pid);
      try {
        unlinkSync(file); // stale: its process is gone
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  } finally {
    unlinkSync(mine);
  }
  // Not guarded: two processes taking over the same stale lock at the same instant can both succeed.
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (readHolder(file)?.pid === me.pid) unlinkSync(file);
  };
}
