// A table a consumer keeps beside the records (visits, MRR movements) is filled from the stored records when
// the warehouse was migrated from before it existed. The fill starts with the consumer; if it fails, the
// first batch tries again and waits for it, so no batch builds on a table that was never filled.
import type { Lander } from './batch-loop.ts';
import type { ConsumerLogger } from './logger.ts';

export interface StartBackfill {
  /** What each batch awaits first: the fill while it runs or once it succeeded, a new attempt after a failure. */
  ready(): Promise<void>;
  /** Settles when no fill is running (for stop). */
  settled(): Promise<void>;
}

/** Starts `fill` (which returns how many rows it wrote); see StartBackfill. */
export function backfillAtStart(
  what: string,
  fill: () => Promise<number>,
  logger?: ConsumerLogger | undefined,
): StartBackfill {
  let running: Promise<void> | null = null;
  const backfilled = () => {
    running ??= fill().then(
      (rows) => {
        if (rows > 0) logger?.info({ rows }, `${what} backfilled`);
      },
      (error: unknown) => {
        running = null;
        throw error;
      },
    );
    return running;
  };
  backfilled().catch((error: unknown) =>
    logger?.warn(
      { error: (error as Error)?.name, message: (error as Error)?.message },
      `${what} backfill failed; retrying with the first batch`,
    ),
  );
  return { ready: backfilled, settled: async () => void (await running?.catch(() => {})) };
}

/**
 * `lander` with each landing waiting for `backfill` first. Everything the batch loop passes goes through,
 * the holding above all: without it a lander's fence (no write computed from a stale read once the
 * partitions moved) and what it keeps in memory per holding would be silently off.
 */
export function landingAfter<Row>(backfill: StartBackfill, lander: Lander<Row>): Lander<Row> {
  return {
    prepare: (message) => lander.prepare(message),
    land: async (items, holding) => {
      await backfill.ready();
      await lander.land(items, holding);
    },
  };
}
