// Property-based tests of the contract validator on hostile input: whatever it is given, it never throws
// and answers either ok (with a record of a known type) or a non-empty message. fast-check picks a random
// seed per run and prints it with any counterexample, so a failure can be replayed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ISO_4217_CODES } from './currencies.ts';
import { PAYLOAD_SCHEMAS, RECORD_TYPES, REVENUE_EVENT_TYPES, type RecordType } from './schemas.ts';
import { type ValidationResult, validateIngest, validatePayload } from './validate.ts';

const RUNS = { numRuns: 400 };

/** Every field name the contract knows, so that generated objects reach the schemas' inner checks. */
const KNOWN_FIELDS = [
  ...new Set(Object.values(PAYLOAD_SCHEMAS).flatMap((schema) => Object.keys(schema.properties))),
];

// Strings of any UTF-16 code units (lone surrogates included), and values of every JSON and JS kind.
const anyString = fc.string({ unit: 'binary', maxLength: 24 });
const anyValue = fc.anything({
  maxDepth: 4,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withBigInt: true,
  withDate: true,
  withTypedArray: true,
  withSparseArray: true,
});
// Values near the contract's edges: right and wrong types for its fields.
const fieldValue = fc.oneof(
  anyValue,
  anyString,
  fc.double(),
  fc.constantFrom(0, -1, 946_684_800_000, Number.MAX_VALUE, null, true, '', 'USD', 'usd', 'QHQ'),
  fc.constantFrom(...REVENUE_EVENT_TYPES),
);
const payload = fc.oneof(
  anyValue,
  fc.dictionary(
    fc.oneof(fc.constantFrom(...KNOWN_FIELDS, '__proto__', 'constructor'), anyString),
    fieldValue,
    {
      maxKeys: 14,
    },
  ),
);
/** A valid record of each type, which `nearlyValid` changes a few fields of. */
const VALID: Record<RecordType, Record<string, unknown>> = {
  pageview: { session_id: 's', url: 'https://example.com/', timestamp: 1_767_225_600_000 },
  event: { session_id: 's', event_name: 'signup', event_data: { plan: 'pro' } },
  identify: { customer_id: 'c', session_id: 's' },
  revenue: {
    visitor_fingerprint: 'v',
    session_id: 's',
    customer_id: 'c',
    amount: 49,
    transaction_id: 't',
    currency: 'eur',
    event_type: 'subscription',
  },
};
/** Valid records with some fields replaced by values of any kind and some removed: both outcomes are common. */
const nearlyValid = fc
  .tuple(
    fc.constantFrom<RecordType>(...RECORD_TYPES),
    fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), fieldValue, { maxKeys: 3 }),
    fc.subarray(KNOWN_FIELDS, { maxLength: 2 }),
  )
  .map(([type, changes, removed]) => {
    const data: Record<string, unknown> = { ...VALID[type], ...changes };
    for (const field of removed) delete data[field];
    return { type, data };
  });
const envelope = fc.record(
  {
    type: fc.oneof(fc.constantFrom(...RECORD_TYPES), anyValue),
    token: fc.oneof(anyString, anyValue),
    id: fc.oneof(fc.uuid(), anyString, anyValue),
    data: payload,
  },
  { requiredKeys: [] },
);

function expectWellFormed(result: ValidationResult<unknown>) {
  expect(typeof result.ok).toBe('boolean');
  if (!result.ok) {
    expect(typeof result.message).toBe('string');
    expect(result.message.length).toBeGreaterThan(0);
    expect(result.message).not.toMatch(/undefined|\[object /);
  }
}

describe('validateIngest on any input', () => {
  it('never throws, and answers ok or a message', () => {
    fc.assert(
      fc.property(fc.oneof(anyValue, envelope, nearlyValid), (body) => {
        expectWellFormed(validateIngest(body));
      }),
      RUNS,
    );
  });

  it('accepts only envelopes of a known type with an object payload, currency normalised', () => {
    fc.assert(
      fc.property(fc.oneof(envelope, nearlyValid), (body) => {
        const result = validateIngest(body);
        expectWellFormed(result);
        if (!result.ok) return;
        expect(RECORD_TYPES).toContain(result.value.type);
        expect(typeof result.value.data).toBe('object');
        expect(Array.isArray(result.value.data)).toBe(false);
        if (result.value.type === 'revenue')
          expect(ISO_4217_CODES.has(result.value.data.currency ?? '')).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('validatePayload on any input', () => {
  it('never throws, and answers ok or a message naming the path prefix', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RecordType>(...RECORD_TYPES),
        fc.oneof(
          payload,
          nearlyValid.map((envelope) => envelope.data),
        ),
        fc.constantFrom('', 'data.'),
        (type, data, prefix) => {
          const result = validatePayload(type, data, prefix);
          expectWellFormed(result);
          if (!result.ok && prefix && typeof data === 'object' && data !== null && !Array.isArray(data)) {
            // A problem inside the payload is reported with its path, never as a bare message.
            expect(result.message.startsWith(prefix) || result.message.startsWith('body')).toBe(true);
          }
        },
      ),
      RUNS,
    );
  });
});
