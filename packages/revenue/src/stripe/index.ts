// The Stripe webhook mapping of @tally/revenue: revenueFromStripeEvent and what its callers need.
export { METADATA_KEYS } from './mapping.ts';
export { fromMinorUnits } from './money.ts';
export { prorationMrr } from './plans.ts';
export { revenueFromStripeEvent } from './revenue-from-event.ts';
export type { StripeEventLike, StripeMappingOptions, StripeRevenue } from './types.ts';
