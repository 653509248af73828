// Test support for the mapper tests: loads the hand-written Stripe events under ../fixtures/stripe/ (written
// after Stripe's documented event and object shapes, older and 2025 API versions, with realistic 2025–2026
// times), and the checks every mapped record must pass.
import { readdirSync, readFileSync } from 'node:fs';
import { isExactMoney, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, type RevenueData } from '@tally/contract';
import type { StripeMapper } from './mapping.ts';
import type { StripeEventLike, StripeMappingOptions } from './types.ts';

const FIXTURES = new URL('../fixtures/stripe/', import.meta.url);

export const fixtureNames = (): string[] =>
  readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.replace(/\.json$/, ''));

/** A fresh copy of the fixture event `name` (file name without .json). */
export const fixture = (name: string): StripeEventLike =>
  JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));

/** The result of `mapper` on fixture `name`, which must be a record. */
export function mappedBy(mapper: StripeMapper, name: string, options: StripeMappingOptions = {}) {
  const result = mapper(fixture(name), options);
  if (!result.ok) throw new Error(`expected a record from ${name}, got: ${result.ignored}`);
  return result;
}

/** A Stripe time (seconds) from an ISO date, to write fixtures' times readably in tests. */
export const stripeSeconds = (iso: string): number => Date.parse(iso) / 1000;

/**
 * The fields of a record that the contract's bounds refuse (`timestamp` whole milliseconds in [2000, 2100),
 * money with at most 6 decimals and 15 significant digits), named with their values; empty when none.
 */
export function inexactFields(record: RevenueData): string[] {
  const bad: string[] = [];
  const { timestamp, amount, mrr_impact } = record;
  const inRange =
    typeof timestamp === 'number' && timestamp >= MIN_TIMESTAMP_MS && timestamp < MAX_TIMESTAMP_MS;
  if (!inRange || !Number.isInteger(timestamp)) bad.push(`timestamp ${timestamp}`);
  if (!isExactMoney(amount)) bad.push(`amount ${amount}`);
  if (typeof mrr_impact === 'number' && !isExactMoney(mrr_impact)) bad.push(`mrr_impact ${mrr_impact}`);
  return bad;
}
