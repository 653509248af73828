// @tally/mail: the mailer (SMTP through nodemailer, or not configured).

export { escapeHtml, invitationMessage, passwordLinkMessage } from './account-messages.ts';
export {
  deliveryError,
  type MailAttachment,
  MailDeliveryError,
  type Mailer,
  type MailMessage,
  openMailer,
  type SendResult,
  type SmtpSettings,
} from './mailer.ts';
