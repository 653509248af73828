// @tally/revenue: send revenue records to Tally from a server (Node 18+): a validating, retrying client
// with typed errors, and a pure mapping from Stripe webhook events to revenue records.
export type { RevenueData, RevenueEventType } from '@tally/contract';
export {
  RevenueClient,
  type RevenueClientOptions,
  type RevenueEventInput,
  type TrackOptions,
  type TrackResult,
} from './client.ts';
export {
  RevenueValidationError,
  TallyError,
  TallyHttpError,
  TallyNetworkError,
  TallyTimeoutError,
} from './errors.ts';
export { randomRecordId, recordIdFor } from './record-id.ts';
export {
  fromMinorUnits,
  METADATA_KEYS,
  prorationMrr,
  revenueFromStripeEvent,
  type StripeEventLike,
  type StripeMappingOptions,
  type StripeRevenue,
} from './stripe/index.ts';
