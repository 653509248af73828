// Which report period is due, in the project's time zone: the weekly report covers Monday to Sunday and is
// due from the next Monday 08:00; the monthly one covers a month and is due from the next month's first day
// at 08:00. A period stays due until its report is sent (the "sent" marker in the state store), so a
// dashboard that was down at 08:00 sends it when it comes back.
import { addDays, addMonths, dayNumber, todayIn } from '@tally/reports/calendar';
import type { ReportKind } from '@tally/state-store';

export const REPORT_HOUR = 8;

export interface ReportPeriod {
  kind: ReportKind;
  /** The period's name in keys and subjects: the week's Monday (2026-11-16) or the month (2026-10). */
  period: string;
  /** The days it covers, both included (the project's days). */
  from: string;
  to: string;
}

/** The hour (0-23) of an instant in a time zone. */
function hourIn(timeZone: string, now: number): number {
  const hour = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(now);
  return Number(hour);
}

/** The latest period of the kind whose report is due at `now` (ms) in the time zone. */
export function dueReportPeriod(kind: ReportKind, timeZone: string, now: number): ReportPeriod {
  const today = todayIn(timeZone, now);
  const early = hourIn(timeZone, now) < REPORT_HOUR;
  if (kind === 'weekly') {
    // 1970-01-01 was a Thursday: Monday is 0.
    const weekday = (((dayNumber(today) + 3) % 7) + 7) % 7;
    let monday = addDays(today, -weekday);
    if (weekday === 0 && early) monday = addDays(monday, -7);
    const from = addDays(monday, -7);
    return { kind, period: from, from, to: addDays(monday, -1) };
  }
  let month = today.slice(0, 7);
  if (today.endsWith('-01') && early) month = addMonths(month, -1);
  const covered = addMonths(month, -1);
  return { kind, period: covered, from: `${covered}-01`, to: addDays(`${month}-01`, -1) };
}
