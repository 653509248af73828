// The mailer: the one way Tally sends mail (invitations, password links, reports). With SMTP_HOST set it
// hands each message to the operator's SMTP server through nodemailer; without it, it is "not configured"
// and sends nothing, answering so, so that the caller shows the link it would have mailed instead.
// Why nodemailer, and how the settings map onto it: docs/design/mail.md.
import type { TallySettings } from '@tally/config';
import { createTransport, type Transporter } from 'nodemailer';

export interface MailAttachment {
  filename: string;
  content: string | Uint8Array;
  /** Default: guessed from the file name. */
  contentType?: string;
  /** A Content-ID: the HTML part shows the attachment in place with `<img src="cid:…">`. */
  cid?: string;
}

export interface MailMessage {
  to: string | string[];
  subject: string;
  /** The plain-text part; every message has one. */
  text: string;
  /** The HTML part, when the message has one. */
  html?: string;
  attachments?: MailAttachment[];
}

/** What became of a message: handed to the SMTP server, or not sent because no server is configured. */
export type SendResult = { sent: true; messageId: string } | { sent: false; reason: 'not-configured' };

export interface Mailer {
  /** Whether an SMTP server is configured, so that messages are really sent. */
  readonly configured: boolean;
  send(message: MailMessage): Promise<SendResult>;
  /** Closes the connections to the SMTP server. */
  close(): void;
}

/** The SMTP server refused a message, or could not be reached; `retryable` when trying later may work. */
export class MailDeliveryError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MailDeliveryError';
    this.retryable = retryable;
  }
}

export type SmtpSettings = Pick<
  TallySettings,
  'SMTP_HOST' | 'SMTP_PORT' | 'SMTP_SECURE' | 'SMTP_USER' | 'SMTP_PASSWORD' | 'SMTP_FROM'
>;

/** The mailer the settings describe: SMTP when SMTP_HOST is set, else the not-configured one. */
export function openMailer(settings: SmtpSettings): Mailer {
  if (!settings.SMTP_HOST) return notConfiguredMailer;
  if (!settings.SMTP_FROM)
    throw new Error('SMTP_HOST needs SMTP_FROM: the address Tally sends its mail from');
  const transport = createTransport({
    host: settings.SMTP_HOST,
    port: settings.SMTP_PORT,
    secure: settings.SMTP_SECURE === 'tls',
    requireTLS: settings.SMTP_SECURE === 'starttls',
    ignoreTLS: settings.SMTP_SECURE === 'none',
    auth: settings.SMTP_USER ? { user: settings.SMTP_USER, pass: settings.SMTP_PASSWORD ?? '' } : undefined,
    pool: true,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return smtpMailer(transport, settings.SMTP_FROM);
}

const notConfiguredMailer: Mailer = {
  configured: false,
  send: async () => ({ sent: false, reason: 'not-configured' }),
  close: () => {},
};

function smtpMailer(transport: Transporter, from: string): Mailer {
  return {
    configured: true,
    async send(message) {
      try {
        const info = await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          attachments: message.attachments?.map((a) => ({
            filename: a.filename,
            content: typeof a.content === 'string' ? a.content : Buffer.from(a.content),
            contentType: a.contentType,
            ...(a.cid ? { cid: a.cid } : {}),
          })),
        });
        return { sent: true, messageId: info.messageId };
      } catch (error) {
        throw deliveryError(error);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * An SMTP failure as a MailDeliveryError: a 4xx reply (mailbox busy, greylisting) and a connection that
 * failed are worth retrying; a 5xx reply (no such user, refused sender) is not.
 */
export function deliveryError(error: unknown): MailDeliveryError {
  const { responseCode, code } = error as { responseCode?: number; code?: string };
  const retryable =
    responseCode !== undefined ? responseCode < 500 : code !== 'EAUTH' && code !== 'EENVELOPE';
  const why = responseCode !== undefined ? `SMTP ${responseCode}` : (code ?? 'error');
  return new MailDeliveryError(
    `the mail could not be sent (${why}): ${(error as Error).message}`,
    retryable,
    {
      cause: error,
    },
  );
}
