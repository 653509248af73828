// The migration lock: two processes starting together (two consumers, a consumer and `tally migrate`)
// migrate once. ClickHouse has no transactions over DDL, but creating a table is atomic: of two CREATE
// TABLE of one name, exactly one succeeds (on a cluster, ON CLUSTER: every node applies the Keeper queue's
// statements in one order, so the same one wins everywhere). So the lock is a table,
// `schema_migrations_lock_<epoch>`, whose comment names its holder and when its lease ends (the engine's
// clock, so the migrators' clocks do not matter):
//   - acquire: read the lock tables; if the newest is released or its lease ended (a crashed holder),
//     create the next epoch; the one creator that succeeds holds the lock, and drops the older epochs.
//     Otherwise wait, polling, until a deadline.
//   - renew: the holder moves its lease on between statements; finding its table gone (taken over after
//     its lease ended) it stops with MigrationLockLostError.
//   - release: the comment says released; the table stays, so epochs only grow (a migrator that read an
//     old state can only create an epoch that exists already, or, if it was dropped meanwhile, one below
//     the newest, which it sees when it reads again, and gives up).
// A holder on this host whose process is gone (or an earlier life of this pid: pid 1 in a restarted
// container) is taken over at once, so `npm start` after a crash does not wait for the lease.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { WarehouseError } from './errors.ts';
import type { Warehouse } from './warehouse.ts';

export const LOCK_TABLE_PREFIX = 'schema_migrations_lock_';
const TABLE_ALREADY_EXISTS = 57;
const UNKNOWN_TABLE = 60;

export interface MigrationLockOptions {
  /** How long the lock holds without renewal: then another migrator may take it over. */
  leaseMs?: number;
  /** How long a migrator waits for the lock before giving up with MigrationLockTimeoutError. */
  waitMs?: number;
  /** How often a waiting migrator reads the lock again. */
  pollMs?: number;
  /** Called each time a migrator finds the lock held by another, with that holder's name. */
  onWait?: (holder: string) => void;
}

export interface MigrationLock {
  /** Who holds it: host/pid/random, as the lock table's comment says. */
  readonly holder: string;
  readonly epoch: number;
  /** Moves the lease on (when a third of it has passed); throws MigrationLockLostError if it was taken over. */
  renew(): Promise<void>;
  release(): Promise<void>;
}

/** What a lock table's comment holds. */
interface LockState {
  holder: string;
  host: string;
  pid: number;
  /** When the holder's process started (ms): tells an earlier process of the same pid apart. */
  boot: number;
  /** End of the lease, in the engine's milliseconds; 0 once released. */
  expires_at: number;
  released?: true;
}

export class MigrationLockTimeoutError extends WarehouseError {
  constructor(holder: string, waitedMs: number) {
    super(`the migrations are locked by ${holder}; gave up after waiting ${Math.round(waitedMs / 1000)} s`, {
      retryable: true,
    });
    this.name = 'MigrationLockTimeoutError';
  }
}

export class MigrationLockLostError extends WarehouseError {
  constructor(holder: string) {
    super(`the migration lock of ${holder} was taken over after its lease ended; stopping`, {
      retryable: false,
    });
    this.name = 'MigrationLockLostError';
  }
}

/** When this process started, to the millisecond. */
const BOOT = Math.round(performance.timeOrigin);

const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** `ON CLUSTER <name>` when the warehouse spreads over a cluster, so every node holds the lock table. */
function onCluster(warehouse: Warehouse): string {
  return warehouse.cluster ? ` ON CLUSTER ${warehouse.cluster}` : '';
}

interface LockTables {
  /** The engine's clock, in milliseconds. */
  now: number;
  /** Every lock table, oldest epoch first. */
  locks: { epoch: number; state: LockState | null }[];
}

async function readLocks(warehouse: Warehouse): Promise<LockTables> {
  const [row] = await warehouse.query<{ now: number; tables: [string, string][] }>(
    `SELECT toUnixTimestamp64Milli(now64(3)) AS now,
            (SELECT groupArray((name, comment)) FROM system.tables
             WHERE database = currentDatabase() AND startsWith(name, {prefix:String})) AS tables`,
    { prefix: LOCK_TABLE_PREFIX },
  );
  const locks = (row?.tables ?? [])
    .map(([name, comment]) => ({
      epoch: Number(name.slice(LOCK_TABLE_PREFIX.length)),
      state: parseState(comment),
    }))
    .filter((lock) => Number.isSafeInteger(lock.epoch) && lock.epoch > 0)
    .sort((a, b) => a.epoch - b.epoch);
  return { now: Number(row?.now), locks };
}

function parseState(comment: string): LockState | null {
  try {
    const state = JSON.parse(comment) as LockState;
    return typeof state.holder === 'string' && typeof state.expires_at === 'number' ? state : null;
  } catch {
    return null;
  }
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Whether a lock may be taken: released, its lease over, or its holder a process of this host that is gone. */
function isFree(state: LockState | null, now: number, self: { host: string; holder: string }): boolean {
  if (!state || state.released || state.expires_at <= now) return true;
  if (state.host !== self.host || state.holder === self.holder) return false;
  return state.pid === process.pid ? state.boot !== BOOT : processGone(state.pid);
}

const codeOf = (error: unknown) => (error instanceof WarehouseError ? error.code : undefined);

/** Takes the migration lock of the warehouse's database, waiting for another holder as long as `waitMs`. */
export async function acquireMigrationLock(
  warehouse: Warehouse,
  options: MigrationLockOptions = {},
): Promise<MigrationLock> {
  const leaseMs = options.leaseMs ?? 300_000;
  const waitMs = options.waitMs ?? 600_000;
  const pollMs = options.pollMs ?? 500;
  const host = hostname();
  const holder = `${host}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const started = Date.now();
  const table = (epoch: number) => `${LOCK_TABLE_PREFIX}${epoch}`;
  const comment = (expiresAt: number, released = false) =>
    quote(
      JSON.stringify({
        holder,
        host,
        pid: process.pid,
        boot: BOOT,
        expires_at: expiresAt,
        ...(released ? { released } : {}),
      }),
    );
  const drop = (epoch: number) =>
    warehouse.command(`DROP TABLE IF EXISTS ${table(epoch)}${onCluster(warehouse)}`);

  for (;;) {
    const { now, locks } = await readLocks(warehouse);
    const newest = locks.at(-1);
    let epoch: number | null = null;
    let leaseEndsAt = now + leaseMs;
    if (newest?.state?.holder === holder) {
      // This migrator's own: a CREATE that succeeded although its answer was lost (and was retried).
      epoch = newest.epoch;
      leaseEndsAt = newest.state.expires_at;
    } else if (!newest || isFree(newest.state, now, { host, holder })) {
      const next = (newest?.epoch ?? 0) + 1;
      const created = await warehouse
        .command(
          `CREATE TABLE ${table(next)}${onCluster(warehouse)} (holder String) ENGINE = Memory COMMENT ${comment(leaseEndsAt)}`,
        )
        .then(
          () => true,
          (error: unknown) => {
            if (codeOf(error) === TABLE_ALREADY_EXISTS || /TABLE_ALREADY_EXISTS/.test(String(error)))
              return false;
            throw error;
          },
        );
      if (!created) continue; // another migrator took it first: read again
      epoch = next;
    }
    if (epoch !== null) {
      const after = await readLocks(warehouse);
      if (after.locks.some((lock) => lock.epoch > (epoch as number))) {
        await drop(epoch); // an epoch dropped meanwhile, below the newest: not the lock
        continue;
      }
      for (const lock of after.locks) if (lock.epoch < epoch) await drop(lock.epoch);
      return heldLock(warehouse, { holder, epoch, table: table(epoch), leaseMs, comment, now, leaseEndsAt });
    }
    const holding = newest?.state?.holder ?? 'an unknown holder';
    options.onWait?.(holding);
    if (Date.now() - started >= waitMs) throw new MigrationLockTimeoutError(holding, Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

function heldLock(
  warehouse: Warehouse,
  held: {
    holder: string;
    epoch: number;
    table: string;
    leaseMs: number;
    comment: (expiresAt: number, released?: boolean) => string;
    /** The engine's clock when the lock was found held. */
    now: number;
    leaseEndsAt: number;
  },
): MigrationLock {
  // The engine's clock then, moved on by this process's monotonic clock: no query per renewal.
  const base = performance.now();
  const engineNow = () => held.now + (performance.now() - base);
  let leaseEndsAt = held.leaseEndsAt;
  const setComment = (text: string) =>
    warehouse
      .command(`ALTER TABLE ${held.table}${onCluster(warehouse)} MODIFY COMMENT ${text}`)
      .catch((error: unknown) => {
        if (codeOf(error) === UNKNOWN_TABLE || /UNKNOWN_TABLE/.test(String(error))) {
          throw new MigrationLockLostError(held.holder);
        }
        throw error;
      });
  return {
    holder: held.holder,
    epoch: held.epoch,
    async renew() {
      const now = engineNow();
      if (leaseEndsAt - now > (held.leaseMs * 2) / 3) return; // renewed less than a third of a lease ago
      await setComment(held.comment(now + held.leaseMs));
      leaseEndsAt = now + held.leaseMs;
    },
    async release() {
      await setComment(held.comment(0, true));
    },
  };
}
