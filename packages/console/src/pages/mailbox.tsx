import { useState } from 'react';
import { Link } from 'wouter';
import { type DevMail, useDevMailbox } from '../api/dev-mailbox';
import { formatTime } from '../components/format';
import { Loading } from '../components/lists';
import { Page } from '../components/page';
import { ProblemAlert } from '../components/problem';

/** How often the open page looks for new emails (they leave through the outbox a moment after the change). */
const REFRESH_MS = 3000;

/**
 * The dev mailbox (only without SMTP_URL): the emails the server would have sent, newest first, each with its text
 * part (addresses made into links: the recipient's answer link opens the recipient's page) and, on demand, its
 * HTML part in a sandboxed frame. Nothing of an email is ever put into this page as markup.
 */
export function MailboxPage() {
  const mailbox = useDevMailbox({ refetchInterval: REFRESH_MS });
  if (mailbox.isPending) return <Loading what="the mailbox" />;
  if (mailbox.isError) {
    return (
      <Page title="Mailbox">
        <ProblemAlert error={mailbox.error}>
          <button type="button" className="button" onClick={() => void mailbox.refetch()}>
            Try again
          </button>
        </ProblemAlert>
      </Page>
    );
  }
  if (mailbox.data === null) {
    return (
      <Page title="Mailbox">
        <p className="alert alert-info">
          This server sends email through SMTP (<code>SMTP_URL</code> is set): there is no dev mailbox to show.
        </p>
      </Page>
    );
  }
  const messages = mailbox.data;
  return (
    <Page title="Mailbox">
      <p className="subtitle">
        <code>SMTP_URL</code> is not set, so this server sends no email: it keeps the last ones here (in memory, until
        it restarts) and in its log. You see the emails of your tenants&apos; requests and those addressed to you. Their
        answer links are live: opening one shows the recipient&apos;s page.
      </p>
      {messages.length === 0 ? (
        <div className="card empty" aria-live="polite">
          No email yet. Create a request, and the email to its recipient appears here within a few seconds.
        </div>
      ) : (
        <ol className="mails" aria-label="Emails, newest first">
          {messages.map((mail, index) => (
            <li key={mail.id}>
              <MailCard mail={mail} open={index === 0} />
            </li>
          ))}
        </ol>
      )}
    </Page>
  );
}

function MailCard({ mail, open }: { mail: DevMail; open: boolean }) {
  const [showHtml, setShowHtml] = useState(false);
  const link = answerLink(mail.text);
  const titleId = `mail-${mail.id}-subject`;
  return (
    <article className="card mail" aria-labelledby={titleId}>
      <details open={open}>
        <summary>
          <span className="mail-subject" id={titleId}>
            {mail.subject}
          </span>
          <span className="mail-meta">
            to {mail.to} · <time dateTime={mail.at}>{formatTime(mail.at)}</time>
          </span>
        </summary>
        <dl className="details mail-headers">
          <div>
            <dt>From</dt>
            <dd>{mail.from}</dd>
          </div>
          <div>
            <dt>To</dt>
            <dd>{mail.to}</dd>
          </div>
          <div>
            <dt>Date</dt>
            <dd>
              <time dateTime={mail.at}>{formatTime(mail.at)}</time>
            </dd>
          </div>
        </dl>
        <p className="button-row">
          {link && (
            <a className="button button-primary" href={link} target="_blank" rel="noopener noreferrer">
              Open the answer page
            </a>
          )}
          {mail.request && (
            <Link
              className="button"
              href={`/tenants/${mail.request.tenantId}/works/${mail.request.workId}/requests/${mail.request.id}`}
            >
              View the request
            </Link>
          )}
        </p>
        <p className="mail-part-title">Text part</p>
        <div className="mail-text">
          <LinkedText text={mail.text} />
        </div>
        <button
          type="button"
          className="button mail-html-toggle"
          aria-expanded={showHtml}
          onClick={() => setShowHtml((shown) => !shown)}
        >
          {showHtml ? 'Hide the HTML part' : 'Show the HTML part (without its styles)'}
        </button>
        {showHtml && (
          <iframe
            className="mail-html"
            title={`HTML part of “${mail.subject}”`}
            // No allow-scripts, no allow-same-origin: the email runs nothing and reaches nothing of the console.
            // Its links may open a new tab (outside the sandbox), as a mail client would.
            sandbox="allow-popups allow-popups-to-escape-sandbox"
            referrerPolicy="no-referrer"
            srcDoc={displayableHtml(mail.html)}
          />
        )}
      </details>
    </article>
  );
}

/** The recipient's answer link in an email's text: `<PUBLIC_URL>/r/<token>`. */
export function answerLink(text: string): string | null {
  return /https?:\/\/[^\s<>"]+\/r\/[A-Za-z0-9_-]+/.exec(text)?.[0] ?? null;
}

const URL_PATTERN = /https?:\/\/[^\s<>"]+/g;

/** Plain text, with its http(s) addresses as links: React elements only, so the text can never become markup. */
function LinkedText({ text }: { text: string }) {
  const parts: React.ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const url = match[0].replace(/[.,;:!?)]+$/, '');
    parts.push(text.slice(last, match.index));
    parts.push(
      <a key={match.index} href={url} target="_blank" rel="noopener noreferrer">
        {url}
      </a>,
    );
    last = match.index + url.length;
  }
  parts.push(text.slice(last));
  return <>{parts}</>;
}

/**
 * The HTML part, made fit for the sandboxed frame. The sandbox is what keeps it harmless; this only removes what
 * the frame would refuse anyway and makes links open a new tab. The frame inherits the console's
 * Content-Security-Policy, which allows no inline style: Chromium reports every style attribute as a violation,
 * even while DOMParser parses it (into a document that runs nothing), so those go before parsing, as text.
 */
export function displayableHtml(html: string): string {
  const unstyled = html
    .replace(/<style\b[^>]*>[\s\S]*?<\/style\s*>/gi, '')
    .replace(/\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
  const doc = new DOMParser().parseFromString(unstyled, 'text/html');
  doc.querySelectorAll('script, style, link, meta, base, iframe, frame, object, embed, form').forEach((element) => {
    element.remove();
  });
  for (const element of Array.from(doc.querySelectorAll('*'))) {
    for (const name of element.getAttributeNames()) {
      if (name === 'style' || name.startsWith('on') || name === 'srcset') element.removeAttribute(name);
    }
    if (element instanceof HTMLAnchorElement) {
      if (!/^https?:/i.test(element.getAttribute('href') ?? '')) element.removeAttribute('href');
      element.target = '_blank';
      element.rel = 'noopener noreferrer';
    }
    if (element.hasAttribute('src') && !/^https?:/i.test(element.getAttribute('src') ?? '')) {
      element.removeAttribute('src');
    }
  }
  return `<!doctype html>\n${doc.documentElement.outerHTML}`;
}
