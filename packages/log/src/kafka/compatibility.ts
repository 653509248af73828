// The compatibility level of the Kafka record log's subjects in the schema registry (`<topic>-value`), over
// the Confluent REST API with plain fetch (no Kafka client: `tally kafka compatibility` loads nothing else).
// A level is the operator's once the subject has one: the log sets SCHEMA_COMPATIBILITY only on a subject
// that has none, and `tally kafka compatibility --set` changes it on purpose.
// What "has none" looks like depends on the registry. Confluent's answers GET /config/<subject> with 404
// (40408) while the subject has no level of its own. Apicurio 2.4's ccompat API answers 404 (40401) only
// while the subject does not exist; once it does, it answers its own level or, without one, the global
// level, with nothing to tell the two apart (and setting NONE deletes the subject's rule: it then answers
// the global level). So a 404 means "none" on both, and a subject that exists keeps whatever it answers.
import { RECORD_TYPES } from '@tally/contract';
import { deadLetterTopic, topicName } from './topics.ts';

export const COMPATIBILITY_LEVELS = [
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
  'NONE',
] as const;
export type Compatibility = (typeof COMPATIBILITY_LEVELS)[number];

export const isCompatibility = (value: unknown): value is Compatibility =>
  (COMPATIBILITY_LEVELS as readonly unknown[]).includes(value);

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

/** The subject a topic's values are registered under (Confluent's TopicNameStrategy). */
export const valueSubject = (topic: string) => `${topic}-value`;

/** The log's subjects: one per record type, and the dead letters'. */
export function logSubjects(topicPrefix: string): string[] {
  return [
    ...RECORD_TYPES.map((type) => valueSubject(topicName(topicPrefix, type))),
    valueSubject(deadLetterTopic(topicPrefix)),
  ];
}

const configUrl = (registryUrl: string, subject: string) =>
  `${registryUrl.replace(/\/$/, '')}/config/${encodeURIComponent(subject)}`;

/** The subject's compatibility level as the registry answers it, or null when it has none (a 404). */
export async function subjectCompatibility(
  registryUrl: string,
  subject: string,
): Promise<Compatibility | null> {
  const response = await fetch(configUrl(registryUrl, subject), { headers: { accept: CONTENT_TYPE } });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok) {
    throw new Error(
      `the schema registry did not give the compatibility of ${subject}: ${await answerOf(response)}`,
    );
  }
  const level = ((await response.json()) as { compatibilityLevel?: unknown }).compatibilityLevel;
  const upper = typeof level === 'string' ? level.toUpperCase() : level;
  if (!isCompatibility(upper)) {
    throw new Error(`the schema registry answered an unknown compatibility for ${subject}: ${String(level)}`);
  }
  return upper;
}

/** Sets the subject's compatibility level. */
export async function setSubjectCompatibility(
  registryUrl: string,
  subject: string,
  level: Compatibility,
): Promise<void> {
  const response = await fetch(configUrl(registryUrl, subject), {
    method: 'PUT',
    headers: { 'content-type': CONTENT_TYPE, accept: CONTENT_TYPE },
    body: JSON.stringify({ compatibility: level }),
  });
  if (!response.ok) {
    throw new Error(
      `the schema registry refused the compatibility ${level} of ${subject}: ${await answerOf(response)}`,
    );
  }
  await response.body?.cancel();
}

/**
 * The subject's level: the one it has, left as it is, or `wanted`, set when it has none (a subject the
 * log registers for the first time). Returns the level registrations under the subject are checked against.
 */
export async function ensureSubjectCompatibility(
  registryUrl: string,
  subject: string,
  wanted: Compatibility,
): Promise<{ level: Compatibility; set: boolean }> {
  const current = await subjectCompatibility(registryUrl, subject);
  if (current !== null) return { level: current, set: false };
  await setSubjectCompatibility(registryUrl, subject, wanted);
  return { level: wanted, set: true };
}

/** A registry's error answer, for a message: its status and its own message (never more than a line). */
export async function answerOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  let message = text;
  try {
    message = String((JSON.parse(text) as { message?: unknown }).message ?? text);
  } catch {
    // not JSON: the text as it is
  }
  return `${response.status}${message ? ` ${message.split('\n')[0]?.slice(0, 300)}` : ''}`;
}
