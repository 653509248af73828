// The messages about an account: the link that sets a password (a new user's, or "forgot password"), and an
// invitation to a project. One text each, for the CLI and the dashboard alike; every one has a plain-text
// part and an HTML part, and the link is the only thing in them that was not written here.
import type { MailMessage } from './mailer.ts';

/** Text made safe to put in HTML. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function message(to: string, subject: string, lines: string[], link: string, after: string): MailMessage {
  const href = escapeHtml(link);
  return {
    to,
    subject,
    text: `${lines.join('\n')}\n\n${link}\n\n${after}\n`,
    html: `${lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}<p><a href="${href}">${href}</a></p><p>${escapeHtml(after)}</p>`,
  };
}

/** The sign-in link that sets a password: a new user's first, or the one "forgot password" sends. */
export function passwordLinkMessage(to: string, link: string): MailMessage {
  return message(
    to,
    'Set your Tally password',
    ['Open this link to set your password and sign in to Tally. It works once, for 7 days:'],
    link,
    'If you did not ask for it, ignore this message: your password stays as it is.',
  );
}

/** An invitation to a project with a role, from a member. */
export function invitationMessage(
  to: string,
  invitation: { project: string; role: string; invited_by: string },
  link: string,
): MailMessage {
  const { project, role, invited_by } = invitation;
  return message(
    to,
    `${invited_by} invited you to ${project} on Tally`,
    [
      `${invited_by} invited you to the project ${project} on Tally, as ${role === 'admin' ? 'an' : 'a'} ${role}.`,
      'Open this link to accept. It works once, for 7 days:',
    ],
    link,
    'If you did not expect it, ignore this message: nothing happens until the link is opened.',
  );
}
