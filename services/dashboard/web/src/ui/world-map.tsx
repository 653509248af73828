// The world map of the Locations card, loaded on demand (its shapes are ~40 KB gzipped): every country of
// Natural Earth's 1:110m shapes (world-atlas, public domain data, ISC), drawn with d3-geo's Equal Earth
// projection as SVG paths (computed once per page), keyed by ISO 3166-1 alpha-2 codes (i18n-iso-countries
// maps Natural Earth's numeric ids), and shaded by the visitors of each country. No tile server: the shapes
// ship with the app. A country with visitors is a button: its name and count on hover or focus (<title>),
// Enter or a click filters the dashboard by it.
import { geoEqualEarth, geoPath } from 'd3-geo';
import countries from 'i18n-iso-countries';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import world from 'world-atlas/countries-110m.json';
import { formatCount } from '../format.ts';
import { countryName } from './breakdown-columns.ts';

const WIDTH = 960;
/** Antarctica (ISO 3166-1 numeric 010): no visitors, and a third of the map's height. */
const LEFT_OUT = new Set(['010']);

interface Shape {
  code: string;
  d: string;
}

let drawn: { shapes: Shape[]; height: number } | null = null;

/**
 * Every country's path, once: its code (alpha-2, or the numeric id where it has none) and SVG path data,
 * projected to WIDTH, and the map's height.
 */
function countryShapes(): { shapes: Shape[]; height: number } {
  if (drawn) return drawn;
  const topology = world as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>;
  const all = feature(topology, topology.objects.countries);
  const collection = { ...all, features: all.features.filter((f) => !LEFT_OUT.has(String(f.id))) };
  const projection = geoEqualEarth().fitWidth(WIDTH, collection);
  const path = geoPath(projection);
  const shapes = collection.features
    .map((f) => ({
      code: countries.numericToAlpha2(String(f.id ?? '')) ?? `n${String(f.id ?? '')}`,
      d: path(f) ?? '',
    }))
    .filter((s) => s.d !== '');
  drawn = { shapes, height: Math.ceil(path.bounds(collection)[1][1]) };
  return drawn;
}

export default function WorldMap(props: {
  /** Visitors per country (alpha-2, upper case). */
  visitors: ReadonlyMap<string, number>;
  onSelect(code: string): void;
}) {
  const max = Math.max(1, ...props.visitors.values());
  const { shapes, height } = countryShapes();
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG has no <fieldset>; the group names the map.
    <svg
      class="world-map"
      viewBox={`0 0 ${WIDTH} ${height}`}
      role="group"
      aria-label="Visitors by country, on a world map"
    >
      {shapes.map(({ code, d }) => {
        const n = props.visitors.get(code) ?? 0;
        if (n === 0)
          return (
            <path key={code} d={d} class="country">
              <title>{countryName(code)}</title>
            </path>
          );
        // Shaded by the square root of the share of the busiest country: small countries stay visible.
        const strength = 0.2 + 0.8 * Math.sqrt(n / max);
        return (
          // biome-ignore lint/a11y/useSemanticElements: a shape of an SVG cannot be a <button>; it acts as one.
          <path
            key={code}
            d={d}
            class="country has-visitors"
            data-country={code}
            style={{ fillOpacity: strength.toFixed(3) }}
            role="button"
            tabindex={0}
            aria-label={`${countryName(code)}: ${formatCount(n)} visitors`}
            onClick={() => props.onSelect(code)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                props.onSelect(code);
              }
            }}
          >
            <title>{`${countryName(code)}: ${formatCount(n)} visitors`}</title>
          </path>
        );
      })}
    </svg>
  );
}
