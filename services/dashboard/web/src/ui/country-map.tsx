// The Locations card's map: the visitors of each country in the range and filters (the country breakdown,
// the same answer as the list's), drawn by world-map.tsx, which is loaded only when the card is shown so
// that the first page stays within its budget. Clicking a country filters by it, as its row does.
import type { ComponentType } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Breakdown } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { breakdownPath } from './breakdown-list.tsx';

type MapComponent = ComponentType<{ visitors: ReadonlyMap<string, number>; onSelect(code: string): void }>;

/** Every country there is (ISO 3166-1 has 249), so that the map shades all of them. */
const ALL_COUNTRIES = 300;

export function CountryMap() {
  const { api, project, params, addFilter } = useTraffic();
  const [WorldMap, setWorldMap] = useState<MapComponent | null>(null);
  useEffect(() => {
    let live = true;
    import('./world-map.tsx').then((module) => {
      if (live) setWorldMap(() => module.default);
    });
    return () => {
      live = false;
    };
  }, []);
  const result = useQuery<Breakdown>(api, breakdownPath(project.id, 'country'), {
    ...params,
    limit: ALL_COUNTRIES,
  });
  const visitors = useMemo(
    () => new Map((result.data?.rows ?? []).filter((r) => r.value !== '').map((r) => [r.value, r.visitors])),
    [result.data],
  );
  if (!WorldMap || !result.data) return <div class="world-map-placeholder" aria-hidden="true" />;
  return (
    <div class={result.stale ? 'world-map-frame is-stale' : 'world-map-frame'}>
      <WorldMap visitors={visitors} onSelect={(code) => addFilter('country', code)} />
    </div>
  );
}
