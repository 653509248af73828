// Which bucket of a time series each annotation falls in, for the `annotation` column of the time-series
// CSV: a day note in the bucket holding that day, an instant in the bucket holding its local time in the
// project's time zone; notes outside the range in none. Several notes of a bucket are joined with "; ".
import type { Annotation } from '@tally/state-store';

/** The note's local time in `timeZone` as `YYYY-MM-DD HH:mm` (a day note: its midnight). */
export function localTimeOf(date: string, timeZone: string): string {
  if (date.length === 10) return `${date} 00:00`;
  // sv-SE writes 2026-03-01 10:00, the order that sorts as text.
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(new Date(date))
    .replace('T', ' ');
}

/** Per bucket start (as in the points, `YYYY-MM-DD` or `YYYY-MM-DD HH:00`): its notes' texts, "; "-joined. */
export function annotationsByBucket(
  buckets: readonly string[],
  to: string,
  notes: readonly Annotation[],
  timeZone: string,
): Map<string, string> {
  const key = (bucket: string) => (bucket.length === 10 ? `${bucket} 00:00` : bucket);
  const texts = new Map<string, string[]>();
  for (const note of notes) {
    const local = localTimeOf(note.date, timeZone);
    if (local.slice(0, 10) > to) continue;
    let found: string | undefined;
    for (const bucket of buckets) if (key(bucket) <= local) found = bucket;
    if (found !== undefined) texts.set(found, [...(texts.get(found) ?? []), note.text]);
  }
  return new Map([...texts].map(([bucket, list]) => [bucket, list.join('; ')]));
}
