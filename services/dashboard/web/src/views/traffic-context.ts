// What every panel of the traffic view shares: the API, the project, the range and filters in force (from
// the URL), and the way to add a filter, so a click on any row narrows every panel at once.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from '../api/client.ts';
import type { Interval, Project } from '../api/types.ts';
import type { Filter } from '../query/filters.ts';
import type { DayRange } from '../query/range.ts';

export interface TrafficContextValue {
  api: Api;
  project: Project;
  range: DayRange;
  interval: Interval;
  filters: Filter[];
  /** `from`, `to` and `filters` as every traffic request sends them. */
  params: Record<string, string>;
  addFilter(dimension: string, value: string): void;
  /** A file name for an export: `<project>-<what>-<from>-<to>.csv`. */
  fileName(what: string): string;
}

export const TrafficContext = createContext<TrafficContextValue | null>(null);

export function useTraffic(): TrafficContextValue {
  const value = useContext(TrafficContext);
  if (!value) throw new Error('useTraffic outside the traffic view');
  return value;
}
