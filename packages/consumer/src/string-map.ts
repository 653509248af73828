// How free-form objects of a payload (event_data, metadata) become the warehouse's Map(String, String):
// strings as they are, every other value (numbers, booleans, null, nested objects) as its JSON text.
export function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v ?? null)]),
  );
}
