// Which bucket of a time chart each annotation falls in (the API's CSV places them the same way): a day note
// in the bucket holding that day, an instant in the bucket holding its local time in the project's zone.
import type { Annotation } from '../api/types.ts';

function localTimeOf(date: string, timeZone: string): string {
  if (date.length === 10) return `${date} 00:00`;
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

/** Bucket index → the texts of its notes; notes outside the range are left out. */
export function annotationsPerBucket(
  buckets: readonly string[],
  to: string,
  notes: readonly Annotation[],
  timeZone: string,
): Map<number, string[]> {
  const key = (bucket: string) => (bucket.length === 10 ? `${bucket} 00:00` : bucket);
  const out = new Map<number, string[]>();
  for (const note of notes) {
    const local = localTimeOf(note.date, timeZone);
    if (local.slice(0, 10) > to) continue;
    let found = -1;
    buckets.forEach((bucket, i) => {
      if (key(bucket) <= local) found = i;
    });
    if (found >= 0) out.set(found, [...(out.get(found) ?? []), note.text]);
  }
  return out;
}

/**
 * Minute index → the texts of the notes made at an instant within that minute, for the realtime chart
 * (`minutes`: the minutes' starts, ISO 8601, one minute apart). Day notes are left out: a day is not a minute.
 */
export function annotationsPerMinute(
  minutes: readonly string[],
  notes: readonly Annotation[],
): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const first = minutes.length > 0 ? Date.parse(minutes[0] as string) : Number.NaN;
  for (const note of notes) {
    if (note.date.length === 10 || Number.isNaN(first)) continue;
    const index = Math.floor((Date.parse(note.date) - first) / 60_000);
    if (index >= 0 && index < minutes.length) out.set(index, [...(out.get(index) ?? []), note.text]);
  }
  return out;
}
