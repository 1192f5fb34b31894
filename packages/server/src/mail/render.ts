/**
 * The emails a recipient gets, as plain text and HTML. Pure: the sender fills in the link when it sends, so the
 * token is never stored. Everything a sender wrote (title, message, names, the work's name) is escaped in the
 * HTML part, so no one can put markup or a link of their own into our email.
 */
export interface RenderedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface RequestMailInput {
  kind: 'request' | 'reminder';
  recipient: { email: string; firstName: string; lastName: string };
  sender: { email: string; firstName: string; lastName: string };
  workName: string;
  title: string;
  message: string;
  dueAt: Date | null;
  /** The answer page: `<PUBLIC_URL>/r/<token>`. */
  link: string;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

const fullName = (person: { firstName: string; lastName: string; email: string }): string =>
  `${person.firstName} ${person.lastName}`.trim() || person.email;

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/**
 * `Tuesday 1 December 2026, 17:00 UTC`: one unambiguous form, whatever the reader's time zone, built by hand so
 * that it does not depend on the ICU data of the Node build.
 */
export const formatDue = (date: Date): string =>
  `${WEEKDAYS[date.getUTCDay()]} ${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}, ` +
  `${date.toISOString().slice(11, 16)} UTC`;

export function renderRequestMail(input: RequestMailInput): RenderedMail {
  const sender = fullName(input.sender);
  const greeting = input.recipient.firstName ? `Hello ${input.recipient.firstName},` : 'Hello,';
  const due = input.dueAt ? formatDue(input.dueAt) : null;
  const reminder = input.kind === 'reminder';
  const subject = reminder ? `Reminder: ${input.title}` : `${sender} asks you: ${input.title}`;
  const intro = reminder
    ? `${sender} is still waiting for your answer to this request about "${input.workName}"${due ? `, due ${due}` : ''}.`
    : `${sender} (${input.sender.email}) sent you a request about "${input.workName}".`;

  const text = [
    greeting,
    '',
    intro,
    '',
    input.title,
    ...(input.message ? ['', input.message] : []),
    ...(due && !reminder ? ['', `Please answer by ${due}.`] : []),
    '',
    `Answer here: ${input.link}`,
    '',
    'You need no account. The link is personal: do not forward this email.',
    '',
  ].join('\n');

  const e = escapeHtml;
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem; margin: 0 auto; padding: 1rem;">
<p>${e(greeting)}</p>
<p>${e(intro)}</p>
<h1 style="font-size: 1.25rem;">${e(input.title)}</h1>
${input.message ? `<p style="white-space: pre-wrap;">${e(input.message)}</p>` : ''}
${due && !reminder ? `<p>Please answer by <strong>${e(due)}</strong>.</p>` : ''}
<p><a href="${e(input.link)}" style="display: inline-block; padding: 0.6rem 1.2rem; background: #1d4ed8; color: #fff; text-decoration: none; border-radius: 0.3rem;">Answer the request</a></p>
<p style="font-size: 0.875rem; color: #555;">Or open this address: ${e(input.link)}<br>You need no account. The link is personal: do not forward this email.</p>
</body>
</html>
`;
  return { to: input.recipient.email, subject, text, html };
}

export interface InvitationMailInput {
  /** The invited address (an account may have it, or not: the email is the same). */
  to: string;
  /** The first name the inviter typed (possibly empty): the greeting of this email, nothing more. */
  invitee: { firstName: string };
  inviter: { email: string; firstName: string; lastName: string };
  tenantName: string;
  role: 'owner' | 'admin' | 'member';
  expiresAt: Date;
  /** Where the invitation is accepted: `<PUBLIC_URL>/console/invitations`. */
  link: string;
}

/**
 * The email an invitation sends: which tenant invited the person, who did, and the console page where they accept
 * or decline it once signed in (an operator creates an account for someone who has none). The same whether or not
 * an account has the address. Its link is no credential: the console asks for the person's own API key.
 */
export function renderInvitationMail(input: InvitationMailInput): RenderedMail {
  const inviter = fullName(input.inviter);
  const greeting = input.invitee.firstName ? `Hello ${input.invitee.firstName},` : 'Hello,';
  const role = input.role === 'member' ? 'a member' : `an ${input.role}`;
  const subject = `${inviter} invited you to join "${input.tenantName}"`;
  const intro = `${inviter} (${input.inviter.email}) invited you to join "${input.tenantName}" as ${role}.`;
  const next =
    `To accept or decline, sign in to the console with your API key: ${input.link}. You join only if you accept, ` +
    `until ${formatDue(input.expiresAt)}. If you have no account on this service, ask its operator for one.`;
  const ignore = 'If you did not expect this invitation, you can ignore this email: nothing changes unless you accept.';
  const text = [greeting, '', intro, '', next, '', ignore, ''].join('\n');
  const e = escapeHtml;
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem; margin: 0 auto; padding: 1rem;">
<p>${e(greeting)}</p>
<p>${e(intro)}</p>
<p><a href="${e(input.link)}" style="display: inline-block; padding: 0.6rem 1.2rem; background: #1d4ed8; color: #fff; text-decoration: none; border-radius: 0.3rem;">See the invitation</a></p>
<p>${e(next)}</p>
<p style="font-size: 0.875rem; color: #555;">${e(ignore)}</p>
</body>
</html>
`;
  return { to: input.to, subject, text, html };
}
