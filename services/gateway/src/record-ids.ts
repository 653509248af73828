// Ids of records sent without one: UUIDv7 (time-ordered, made by the uuid package) from random bytes
// drawn out of a pool refilled 4 KiB at a time. uuid's own v7 asks the system for 16 random bytes on every
// call (crypto.getRandomValues), which was 2% of the gateway's CPU profile; Node.js pools randomUUID's
// bytes the same way. The millisecond and the counter that keep the ids of one millisecond in order are
// kept here, as uuid keeps them when it draws the bytes itself (RFC 9562, 6.2, method 1).
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let next = POOL_BYTES;
let lastMs = Number.NEGATIVE_INFINITY;
let counter = 0;

/** A new UUIDv7, later than every one this thread made before (within one millisecond, by its counter). */
export function newRecordId(now = Date.now()): string {
  if (next + 16 > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const random = pool.subarray(next, next + 16);
  next += 16;
  if (now > lastMs) {
    // A new millisecond: the counter starts at a random value (31 bits, its top bit clear for headroom).
    counter =
      (((random[6] as number) & 0x7f) << 24) |
      ((random[7] as number) << 16) |
      ((random[8] as number) << 8) |
      (random[9] as number);
    lastMs = now;
  } else {
    counter = (counter + 1) | 0;
    if (counter === 0) lastMs++; // the counter wrapped: borrow the next millisecond
  }
  return uuidv7({ random, msecs: lastMs, seq: counter });
}
