/**
 * The emails the service sends, as plain text and HTML. Pure: the sender fills in the links when it sends, so no
 * token is ever stored. Our email must not be a relay for someone else's words: the subject is our sentence (who
 * sent it, from which tenant, each name quoted and shortened), and what a member wrote (a request's title and
 * message) is in the body only, set apart as a quotation. Everything a member wrote (title, message, names, the
 * tenant's and work's names) is escaped in the HTML part, so no one can put markup or a link of their own into it.
 * Every email ends with the link that stops the tenant's emails to the address (its page also stops every email of
 * the service), also in `List-Unsubscribe` (one click: the tenant's).
 */
export interface RenderedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Headers beyond the usual ones: `List-Unsubscribe` and its one-click `List-Unsubscribe-Post` (RFC 8058). */
  headers?: Record<string, string>;
}

/** Who is writing, as every email names them: the tenant's member, and the tenant. */
interface From {
  sender: { email: string; firstName: string; lastName: string };
  tenantName: string;
  /** `<PUBLIC_URL>/stop/<token>`: stops every email of this tenant to this address. */
  stopLink: string;
}

export interface RequestMailInput extends From {
  kind: 'request' | 'reminder';
  recipient: { email: string; firstName: string; lastName: string };
  workName: string;
  title: string;
  message: string;
  dueAt: Date | null;
  /** The answer page: `<PUBLIC_URL>/r/<token>`. */
  link: string;
  /** When that link stops working (ANSWER_LINK_TTL after this email). */
  linkExpiresAt: Date;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

const fullName = (person: { firstName: string; lastName: string; email: string }): string =>
  `${person.firstName} ${person.lastName}`.trim() || person.email;

/** The longest a name may be in a subject (in code points): enough to recognise it, too short to carry a message. */
export const SUBJECT_NAME_LENGTH = 40;

/** `text` cut to `max` code points (not halfway through an astral character), with an ellipsis when it was cut. */
export function shorten(text: string, max = SUBJECT_NAME_LENGTH): string {
  const points = [...text];
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

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

/** What a member wrote, as quoted lines of the text part (`> …`). */
const quoted = (lines: string[]): string[] =>
  lines.flatMap((line) => line.split('\n')).map((line) => (line === '' ? '>' : `> ${line}`));

/** The end of every email: why it came, and the link that stops them. */
function footer({ tenantName, stopLink }: From): { text: string[]; html: string } {
  const why = `You got this email because a member of "${tenantName}" on works-api wrote to this address.`;
  const stop = `To stop every email from "${tenantName}" to this address, or every email from works-api, open: ${stopLink}`;
  return {
    text: ['--', why, stop, ''],
    html: `<p style="font-size: 0.8rem; color: #555; border-top: 1px solid #ddd; padding-top: 0.75rem;">${escapeHtml(why)}<br><a href="${escapeHtml(stopLink)}">Stop emails from "${escapeHtml(tenantName)}" or from works-api</a></p>`,
  };
}

const unsubscribeHeaders = (stopLink: string): Record<string, string> => ({
  'List-Unsubscribe': `<${stopLink}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});

function page(subject: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem; margin: 0 auto; padding: 1rem;">
${body}
</body>
</html>
`;
}

const button = (href: string, label: string) =>
  `<p><a href="${escapeHtml(href)}" style="display: inline-block; padding: 0.6rem 1.2rem; background: #1d4ed8; color: #fff; text-decoration: none; border-radius: 0.3rem;">${escapeHtml(label)}</a></p>`;

export function renderRequestMail(input: RequestMailInput): RenderedMail {
  const sender = fullName(input.sender);
  const greeting = input.recipient.firstName ? `Hello ${input.recipient.firstName},` : 'Hello,';
  const due = input.dueAt ? formatDue(input.dueAt) : null;
  const reminder = input.kind === 'reminder';
  const who = `${shorten(sender)} of "${shorten(input.tenantName)}"`;
  const subject = reminder ? `Reminder: ${who} is waiting for your answer` : `${who} sent you a request`;
  const intro = reminder
    ? `${sender} (${input.sender.email}), of "${input.tenantName}", is still waiting for your answer to this request about "${input.workName}"${due ? `, due ${due}` : ''}. They wrote:`
    : `${sender} (${input.sender.email}), of "${input.tenantName}", sent you a request about "${input.workName}". They wrote:`;
  const end = footer(input);

  const text = [
    greeting,
    '',
    intro,
    '',
    ...quoted([input.title, ...(input.message ? ['', input.message] : [])]),
    ...(due && !reminder ? ['', `Please answer by ${due}.`] : []),
    '',
    `Answer here: ${input.link}`,
    '',
    `You need no account. The link is personal (do not forward this email) and works until ${formatDue(input.linkExpiresAt)}.`,
    '',
    ...end.text,
  ].join('\n');

  const e = escapeHtml;
  const html = page(
    subject,
    `<p>${e(greeting)}</p>
<p>${e(intro)}</p>
<blockquote style="margin: 1rem 0; padding: 0.5rem 1rem; border-left: 4px solid #c7cbd3; background: #f5f6f8;">
<p style="font-size: 1.1rem; font-weight: 600; margin: 0.25rem 0;">${e(input.title)}</p>
${input.message ? `<p style="white-space: pre-wrap;">${e(input.message)}</p>` : ''}
</blockquote>
${due && !reminder ? `<p>Please answer by <strong>${e(due)}</strong>.</p>` : ''}
${button(input.link, 'Answer the request')}
<p style="font-size: 0.875rem; color: #555;">Or open this address: ${e(input.link)}<br>You need no account. The link is personal (do not forward this email) and works until ${e(formatDue(input.linkExpiresAt))}.</p>
${end.html}`,
  );
  return { to: input.recipient.email, subject, text, html, headers: unsubscribeHeaders(input.stopLink) };
}

export interface InvitationMailInput extends Omit<From, 'sender'> {
  /** The invited address (an account may have it, or not: the email is the same). */
  to: string;
  /** The first name the inviter typed (possibly empty): the greeting of this email, nothing more. */
  invitee: { firstName: string };
  inviter: { email: string; firstName: string; lastName: string };
  role: 'owner' | 'admin' | 'member';
  expiresAt: Date;
  /** Where the invitation is accepted: `<PUBLIC_URL>/console/invitations?email=<the invited address>`. */
  link: string;
}

/**
 * The email an invitation sends: which tenant invited the person, who did, and the console page where they accept
 * or decline it once signed in by email with the invited address (someone without an account gets one by signing
 * in, with the names they type). The same whether or not an account has the address. Its link is no credential:
 * the console emails a sign-in link to the address.
 */
export function renderInvitationMail(input: InvitationMailInput): RenderedMail {
  const inviter = fullName(input.inviter);
  const greeting = input.invitee.firstName ? `Hello ${input.invitee.firstName},` : 'Hello,';
  const role = input.role === 'member' ? 'a member' : `an ${input.role}`;
  const subject = `${shorten(inviter)} invited you to join "${shorten(input.tenantName)}" on works-api`;
  const intro = `${inviter} (${input.inviter.email}) invited you to join "${input.tenantName}" as ${role}.`;
  const next =
    `To accept or decline, open ${input.link} and sign in with this address (we email you a sign-in link; ` +
    `without an account yet, signing in makes one with the names you type). You join only if you accept, ` +
    `until ${formatDue(input.expiresAt)}.`;
  const ignore = 'If you did not expect this invitation, you can ignore this email: nothing changes unless you accept.';
  const end = footer({ ...input, sender: input.inviter });
  const text = [greeting, '', intro, '', next, '', ignore, '', ...end.text].join('\n');
  const e = escapeHtml;
  const html = page(
    subject,
    `<p>${e(greeting)}</p>
<p>${e(intro)}</p>
${button(input.link, 'See the invitation')}
<p>${e(next)}</p>
<p style="font-size: 0.875rem; color: #555;">${e(ignore)}</p>
${end.html}`,
  );
  return { to: input.to, subject, text, html, headers: unsubscribeHeaders(input.stopLink) };
}

export interface SignInMailInput {
  to: string;
  /** `<PUBLIC_URL>/console/sign-in#token=…` */
  link: string;
  /** `ABCD-EFGH`, for a person who reads this email on another device. */
  code: string;
  expiresAt: Date;
  /** No account has the address yet: signing in makes one (the console asks for the person's names). */
  newAccount: boolean;
}

/**
 * The sign-in email: a link to the console and the same sign-in as a short code, valid until `expiresAt`, once.
 * Written by the service alone (no one else's words in it), so it needs no stop link: it comes only when someone
 * asks for it, and the per-address caps bound how often.
 */
export function renderSignInMail(input: SignInMailInput): RenderedMail {
  const subject = `Your sign-in link for works-api (code ${input.code})`;
  const until = formatDue(input.expiresAt);
  const intro = input.newAccount
    ? 'Someone (we hope you) asked to sign in to works-api with this address. Signing in creates your account: the console asks for your names.'
    : 'Someone (we hope you) asked to sign in to works-api with this address.';
  const code = `Or, on the device where you asked, enter this code: ${input.code}`;
  const rules = `The link and the code work once, until ${until}. If you did not ask, ignore this email: nothing happens.`;
  const text = ['Hello,', '', intro, '', `Sign in: ${input.link}`, '', code, '', rules, ''].join('\n');
  const e = escapeHtml;
  const html = page(
    subject,
    `<p>Hello,</p>
<p>${e(intro)}</p>
${button(input.link, 'Sign in')}
<p>${e(code.replace(input.code, ''))}<strong style="font-family: ui-monospace, monospace; font-size: 1.2rem;">${e(input.code)}</strong></p>
<p style="font-size: 0.875rem; color: #555;">${e(rules)}</p>`,
  );
  return { to: input.to, subject, text, html };
}
