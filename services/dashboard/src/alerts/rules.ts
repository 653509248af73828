// An alert rule as the API takes it, checked and put in its stored form (docs/alerts.md): a known kind,
// its threshold within the kind's range, the fields the kind needs, member emails and an http(s) webhook,
// and at least one of the two. Fields of another kind are dropped, so a rule changed to another kind
// keeps none of its old kind's. Every refusal is an AlertRuleError, answered 400 with its message.
import { RECORD_TYPES, toMicros } from '@tally/contract';
import { ALERT_KINDS, type AlertKind, type AlertRuleFields } from '@tally/state-store';

export class AlertRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AlertRuleError';
  }
}

/** A rule as a request gives it (POST whole, PATCH merged over the stored rule). */
export interface AlertRuleInput {
  kind: string;
  threshold: number;
  record_type?: string | undefined;
  direction?: string | undefined;
  min_baseline?: number | undefined;
  currency?: string | null | undefined;
  emails?: readonly string[] | undefined;
  webhook_url?: string | null | undefined;
}

/** Each kind's threshold: its bounds and what it counts. */
export const THRESHOLDS: Record<AlertKind, { min: number; max: number; integer: boolean; unit: string }> = {
  stalled: { min: 1, max: 7 * 24 * 60, integer: true, unit: 'minutes' },
  dead_letters: { min: 0, max: 1_000_000, integer: true, unit: 'dead letters' },
  traffic: { min: 1, max: 10_000, integer: true, unit: 'percent' },
  mrr_churn: { min: 0.000001, max: 999_999_999_999_999, integer: false, unit: 'an amount of money' },
};
export const DEFAULT_MIN_BASELINE = 20;
export const MAX_ALERT_EMAILS = 20;
const CURRENCY = /^[A-Za-z]{3}$/;

const isKind = (kind: string): kind is AlertKind => (ALERT_KINDS as readonly string[]).includes(kind);

/** The rule checked against the project's members (lower-case addresses), in its stored form. */
export function checkAlertRule(input: AlertRuleInput, members: ReadonlySet<string>): AlertRuleFields {
  const { kind, threshold } = input;
  if (!isKind(kind)) throw new AlertRuleError(`unknown kind ${kind}: one of ${ALERT_KINDS.join(', ')}`);
  const bounds = THRESHOLDS[kind];
  const max = kind === 'traffic' && input.direction === 'drop' ? 100 : bounds.max;
  if (
    !Number.isFinite(threshold) ||
    threshold < bounds.min ||
    threshold > max ||
    (bounds.integer && !Number.isInteger(threshold))
  ) {
    throw new AlertRuleError(
      `threshold of ${kind === 'mrr_churn' ? 'an' : 'a'} ${kind} rule is ${bounds.unit}: ${bounds.integer ? 'a whole number ' : ''}from ${bounds.min} to ${max}`,
    );
  }
  const fields: AlertRuleFields = { kind, threshold, emails: [], webhook_url: null };
  switch (kind) {
    case 'stalled':
      if (!input.record_type || !(RECORD_TYPES as readonly string[]).includes(input.record_type))
        throw new AlertRuleError(`record_type of a stalled rule is one of ${RECORD_TYPES.join(', ')}`);
      fields.record_type = input.record_type;
      break;
    case 'traffic': {
      if (input.direction !== 'spike' && input.direction !== 'drop')
        throw new AlertRuleError('direction of a traffic rule is spike or drop');
      fields.direction = input.direction;
      const baseline = input.min_baseline ?? DEFAULT_MIN_BASELINE;
      if (!Number.isInteger(baseline) || baseline < 1 || baseline > 1_000_000)
        throw new AlertRuleError('min_baseline is a whole number of pageviews from 1 to 1000000');
      fields.min_baseline = baseline;
      break;
    }
    case 'mrr_churn':
      try {
        toMicros(threshold);
      } catch {
        throw new AlertRuleError('threshold of an mrr_churn rule has at most 6 decimal places');
      }
      if (input.currency !== undefined && input.currency !== null && !CURRENCY.test(input.currency))
        throw new AlertRuleError('currency is an ISO 4217 code (USD), or null for each currency');
      fields.currency = input.currency ? input.currency.toUpperCase() : null;
      break;
  }
  const emails = [...new Set((input.emails ?? []).map((e) => e.trim().toLowerCase()))];
  if (emails.length > MAX_ALERT_EMAILS)
    throw new AlertRuleError(`a rule emails at most ${MAX_ALERT_EMAILS} members`);
  for (const email of emails)
    if (!members.has(email)) throw new AlertRuleError(`${email} is not a member of the project`);
  fields.emails = emails;
  if (input.webhook_url !== undefined && input.webhook_url !== null && input.webhook_url !== '') {
    let url: URL;
    try {
      url = new URL(input.webhook_url);
    } catch {
      throw new AlertRuleError('webhook_url must be an http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new AlertRuleError('webhook_url must be an http(s) URL');
    fields.webhook_url = url.href;
  }
  if (fields.emails.length === 0 && fields.webhook_url === null)
    throw new AlertRuleError('a rule needs at least one email or a webhook_url to tell');
  return fields;
}
