// Record ids for revenue records. The envelope `id` makes a send idempotent: the gateway keeps it as the
// record id, and consumers drop a second record with the same id. A random id covers the retries of one
// `track` call; a name-based id (UUID v5, RFC 9562) also covers the same business event sent again later,
// such as a payment-processor webhook delivered twice.
import { createHash, randomUUID } from 'node:crypto';

/** Namespace of Tally's name-based record ids (a fixed random UUID). */
const NAMESPACE = 'a3d9c2a4-6f1e-4c65-9a51-3f0b8d3e7c21';

export const randomRecordId = (): string => randomUUID();

/** The same UUID for the same name, e.g. `recordIdFor('stripe:evt_1P…')`. */
export function recordIdFor(name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(NAMESPACE.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50; // version 5
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
