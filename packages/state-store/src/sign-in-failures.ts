// Failed sign-ins per (client address, account) pair, and the wait they impose on that pair: after the n-th
// failure in a row, the pair's next attempt waits base·2^(n−1), at most the cap. Counting per pair slows a
// guesser without locking the owner out: the right password from another address signs in at once (a
// guesser spread over many addresses meets the per-address attempt limit instead, dashboard.ts). Kept in
// the state store, so shared by every dashboard replica through Redis when REDIS_URL is set (or by the
// processes on one TALLY_DATA_DIR); keyed by a hash, so neither the address nor the email is stored.
import { hashSecret } from './secrets.ts';
import type { StateStore } from './state-store.ts';
import { normaliseEmail } from './users.ts';

/** The wait after the first failure; each further one doubles it. */
export const SIGN_IN_DELAY_BASE_MS = 1_000;
/** The longest wait (reached at the 11th failure in a row). */
export const SIGN_IN_DELAY_CAP_MS = 15 * 60_000;
/** A pair's failures are forgotten this long after its last one (or at once after a success). */
export const SIGN_IN_FAILURES_TTL_MS = 24 * 3_600_000;

const COLLECTION = 'sign_in_failures';

interface PairFailures {
  failures: number;
  /** When the pair may try again (ms since the epoch). */
  retry_at: number;
}

/** The wait after `failures` failures in a row: base·2^(failures−1), capped (0 without failures). */
export function signInDelayMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(SIGN_IN_DELAY_CAP_MS, SIGN_IN_DELAY_BASE_MS * 2 ** Math.min(failures - 1, 30));
}

export class SignInFailures {
  readonly #store: StateStore;
  readonly #now: () => number;

  /** `now`: the clock the waits are measured by (tests step it; the store's expiry keeps real time). */
  constructor(store: StateStore, options: { now?: () => number } = {}) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
  }

  /** How long the pair must still wait before its next attempt, in ms (0: it may try now). */
  async wait(address: string, email: string): Promise<number> {
    const pair = await this.#store.get<PairFailures>(COLLECTION, pairKey(address, email));
    return pair ? Math.max(0, pair.retry_at - this.#now()) : 0;
  }

  /** Counts a failure of the pair; the wait it now imposes, in ms. */
  async fail(address: string, email: string): Promise<number> {
    const key = pairKey(address, email);
    // Read, then written: two failures at the same instant may count once. The per-address limit bounds
    // what a guesser gains by racing its own requests.
    const failures = ((await this.#store.get<PairFailures>(COLLECTION, key))?.failures ?? 0) + 1;
    const delay = signInDelayMs(failures);
    await this.#store.put<PairFailures>(
      COLLECTION,
      key,
      { failures, retry_at: this.#now() + delay },
      SIGN_IN_FAILURES_TTL_MS,
    );
    return delay;
  }

  /** A success forgets the pair's failures. */
  async succeed(address: string, email: string): Promise<void> {
    await this.#store.delete(COLLECTION, pairKey(address, email));
  }
}

/** The pair's key: a hash of the address and the normalised email (an invalid email as typed). */
function pairKey(address: string, email: string): string {
  let account: string;
  try {
    account = normaliseEmail(email);
  } catch {
    account = email;
  }
  return hashSecret(`${address}\n${account}`);
}
