// Reading what arrived at Mailpit through its HTTP API (/api/v1). Several test files, and other checkouts,
// share one Mailpit: a test searches by the recipient address it made unique, never lists or deletes all.
import { setTimeout as delay } from 'node:timers/promises';

export interface MailpitAddress {
  Name: string;
  Address: string;
}

export interface MailpitMessage {
  ID: string;
  Subject: string;
  From: MailpitAddress;
  To: MailpitAddress[];
  Text: string;
  HTML: string;
  Attachments: { FileName: string; ContentType: string; PartID: string }[];
  /** Parts shown in place by the HTML part (`cid:`), with their Content-ID. */
  Inline: { FileName: string; ContentType: string; PartID: string; ContentID: string }[];
}

/** A recipient address no other test uses (`<label>-<random>@tally.test`). */
export function uniqueAddress(label: string): string {
  return `${label}-${Math.random().toString(36).slice(2, 10)}@tally.test`;
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`Mailpit ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The messages sent to `address`, newest first, each read in full. */
export async function messagesTo(apiUrl: string, address: string): Promise<MailpitMessage[]> {
  const query = new URLSearchParams({ query: `to:"${address}"` });
  const found = await json<{ messages: { ID: string }[] }>(`${apiUrl}/api/v1/search?${query}`);
  return Promise.all(found.messages.map((m) => json<MailpitMessage>(`${apiUrl}/api/v1/message/${m.ID}`)));
}

/**
 * Waits until `count` messages to `address` have arrived (SMTP's answer comes before Mailpit has stored
 * the message) and returns them, newest first. Polls the API until `timeoutMs` has passed.
 */
export async function waitForMessages(
  apiUrl: string,
  address: string,
  count = 1,
  timeoutMs = 10_000,
): Promise<MailpitMessage[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const messages = await messagesTo(apiUrl, address);
    if (messages.length >= count) return messages;
    if (Date.now() > deadline) {
      throw new Error(`${messages.length} of ${count} messages to ${address} reached Mailpit (${apiUrl})`);
    }
    await delay(100);
  }
}

/** Waits for the newest message to `address` (see waitForMessages). */
export async function waitForMessage(apiUrl: string, address: string): Promise<MailpitMessage> {
  const [newest] = await waitForMessages(apiUrl, address, 1);
  if (!newest) throw new Error(`no message to ${address}`);
  return newest;
}

/** The raw bytes of an attachment of a message. */
export async function attachment(apiUrl: string, id: string, partId: string): Promise<Buffer> {
  const response = await fetch(`${apiUrl}/api/v1/message/${id}/part/${partId}`);
  if (!response.ok) throw new Error(`Mailpit attachment ${id}/${partId}: ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}
