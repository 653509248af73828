// A value kept in a WeakMap per object (a fold, a touches map), made the first time it is asked for: the
// answers the revenue panels keep per fold (attribution, drill-down) are found through it.
export function kept<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
