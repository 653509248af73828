// The mailer against a real SMTP server, Mailpit (infra/mailpit), read back through its API: the subject,
// the sender and recipients, both parts and an attachment arrive as sent; settings from the config schema
// (a password from a file) reach the server; a server that cannot be reached is a retryable delivery error;
// without SMTP_HOST nothing is sent and the caller is told so.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { MailDeliveryError, openMailer } from '@tally/mail';
import { describe, expect, inject, it } from 'vitest';
import { attachment, uniqueAddress, waitForMessage } from './support/mailpit.ts';

const smtp = new URL(inject('mailpitSmtpUrl'));
const api = inject('mailpitUrl');

/** The settings of the Mailpit the tests share, as an operator would write them (plain SMTP on localhost). */
function mailpitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    SMTP_HOST: smtp.hostname,
    SMTP_PORT: smtp.port,
    SMTP_SECURE: 'none',
    SMTP_FROM: 'Tally <tally@tally.test>',
    ...extra,
  };
}

describe('the mailer on Mailpit', () => {
  it('delivers the subject, sender, recipients, text and HTML parts and an attachment', async () => {
    const to = uniqueAddress('mailer');
    const cc = uniqueAddress('mailer-second');
    const mailer = openMailer(loadConfig(mailpitEnv()));
    try {
      expect(mailer.configured).toBe(true);
      const result = await mailer.send({
        to: [to, cc],
        subject: 'Weekly report: 1 234 visitors',
        text: 'Visitors: 1 234\nhttps://tally.test/p/shop',
        html: '<p>Visitors: <b>1 234</b></p><a href="https://tally.test/p/shop">Open</a>',
        attachments: [{ filename: 'report.csv', content: 'day,visitors\n2026-11-26,1234\n' }],
      });
      expect(result).toMatchObject({ sent: true });
      const message = await waitForMessage(api, to);
      expect(message.Subject).toBe('Weekly report: 1 234 visitors');
      expect(message.From).toEqual({ Name: 'Tally', Address: 'tally@tally.test' });
      expect(message.To.map((a) => a.Address).sort()).toEqual([to, cc].sort());
      // SMTP carries lines ended by CRLF.
      expect(message.Text.replaceAll('\r\n', '\n').trim()).toBe('Visitors: 1 234\nhttps://tally.test/p/shop');
      expect(message.HTML).toBe('<p>Visitors: <b>1 234</b></p><a href="https://tally.test/p/shop">Open</a>');
      expect(message.Attachments).toEqual([
        expect.objectContaining({ FileName: 'report.csv', ContentType: 'text/csv' }),
      ]);
      const csv = await attachment(api, message.ID, message.Attachments[0]?.PartID ?? '');
      expect(csv.toString()).toBe('day,visitors\n2026-11-26,1234\n');
    } finally {
      mailer.close();
    }
  });

  it('signs in with SMTP_USER and a password read from SMTP_PASSWORD_FILE', async () => {
    const to = uniqueAddress('mailer-auth');
    const file = join(mkdtempSync(join(tmpdir(), 'tally-smtp-')), 'password');
    writeFileSync(file, 's3cret pass\n');
    const config = loadConfig(mailpitEnv({ SMTP_USER: 'tally', SMTP_PASSWORD_FILE: file }));
    expect(config.SMTP_PASSWORD).toBe('s3cret pass');
    const mailer = openMailer(config);
    try {
      await mailer.send({ to, subject: 'Signed in', text: 'plain only' });
      const message = await waitForMessage(api, to);
      expect(message.Subject).toBe('Signed in');
      expect(message.Text.trim()).toBe('plain only');
      expect(message.HTML).toBe('');
    } finally {
      mailer.close();
    }
  });

  it('reports a server that cannot be reached as a retryable delivery error', async () => {
    // A port that was free a moment ago and is closed again: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const mailer = openMailer(loadConfig(mailpitEnv({ SMTP_PORT: String(port) })));
    try {
      const error = await mailer
        .send({ to: uniqueAddress('nowhere'), subject: 'x', text: 'x' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailDeliveryError);
      expect(error).toMatchObject({
        retryable: true,
        message: expect.stringMatching(/could not be sent.*ECONNREFUSED/),
      });
    } finally {
      mailer.close();
    }
  });
});

describe('the mailer without SMTP_HOST', () => {
  it('sends nothing and says that it is not configured', async () => {
    const mailer = openMailer(loadConfig({}));
    expect(mailer.configured).toBe(false);
    await expect(mailer.send({ to: 'a@tally.test', subject: 's', text: 't' })).resolves.toEqual({
      sent: false,
      reason: 'not-configured',
    });
  });

  it('refuses SMTP_HOST without SMTP_FROM when the settings load', () => {
    expect(() => loadConfig({ SMTP_HOST: 'smtp.example.com' })).toThrow(/SMTP_HOST needs SMTP_FROM/);
  });
});
