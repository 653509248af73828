// Revenue records of a project whose metadata has every given key with the given value
// (`tally revenue search --metadata plan=pro`). Values compare as text: metadata is stored as
// Map(String, String), non-string values as their JSON. The answer carries every field as received.
import type { QueryParams, Warehouse } from '@tally/warehouse';

export interface StoredRevenueRecord {
  id: string;
  project_id: string;
  transaction_id: string;
  /** The record's time and when Tally received it, ISO 8601 (UTC). */
  timestamp: string;
  received_at: string;
  timestamp_clamped: boolean;
  /** The validated payload as received: every field, metadata with its original types. */
  data: Record<string, unknown>;
}

export async function searchRevenue(
  warehouse: Warehouse,
  options: { project: string; metadata: Record<string, string>; limit?: number },
): Promise<StoredRevenueRecord[]> {
  const params: QueryParams = { project: options.project, limit: options.limit ?? 1000 };
  const conditions = Object.entries(options.metadata).map(([key, value], i) => {
    params[`key${i}`] = key;
    params[`value${i}`] = value;
    return `mapContains(metadata, {key${i}:String}) AND metadata[{key${i}:String}] = {value${i}:String}`;
  });
  const rows = await warehouse.query<StoredRecordRow>(
    `SELECT ${STORED_RECORD_COLUMNS}
     FROM revenue_records
     WHERE project_id = {project:String} ${conditions.map((c) => `AND ${c}`).join(' ')}
     ORDER BY timestamp, transaction_id
     LIMIT {limit:UInt32}`,
    params,
  );
  return rows.map(storedRecord);
}

/** The columns of revenue_records a StoredRevenueRecord is made of (storedRecord). */
export const STORED_RECORD_COLUMNS = `id, project_id, transaction_id, toUnixTimestamp64Milli(timestamp) AS timestamp_ms,
            toUnixTimestamp64Milli(received_at) AS received_at_ms, timestamp_clamped, payload`;

export interface StoredRecordRow {
  id: string;
  project_id: string;
  transaction_id: string;
  timestamp_ms: number;
  received_at_ms: number;
  timestamp_clamped: boolean;
  payload: string;
}

/** A row of STORED_RECORD_COLUMNS as the record it stores. */
export function storedRecord(row: StoredRecordRow): StoredRevenueRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    transaction_id: row.transaction_id,
    timestamp: new Date(Number(row.timestamp_ms)).toISOString(),
    received_at: new Date(Number(row.received_at_ms)).toISOString(),
    timestamp_clamped: row.timestamp_clamped,
    data: JSON.parse(row.payload) as Record<string, unknown>,
  };
}
