// The tables the consumers keep beside what they land (`@tally/reports/tables`), each equal to a report's
// fold over the stored records: visits-table.ts the visits (the analytics consumer, with the visit fold of
// traffic/visits.ts), mrr-table.ts mrr_movements (the revenue consumer, with the MRR ledger of
// revenue/ledger.ts). This file only re-exports.

export type { VisitRecord } from '../traffic/visits.ts';
export {
  backfillMrrMovements,
  MRR_MOVEMENT_COLUMNS,
  type MrrMovementRow,
  refreshCustomersMrr,
  refreshMrrMovements,
} from './mrr-table.ts';
export {
  backfillVisits,
  type RefreshOptions,
  refreshVisits,
  VISIT_COLUMNS,
  VISIT_DURATION_COLUMNS,
  VISIT_RECORD_COLUMNS,
  VisitCache,
  type VisitDurationRow,
  type VisitRow,
  visitRow,
} from './visits-table.ts';
