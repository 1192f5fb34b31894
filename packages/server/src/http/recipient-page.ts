import { createHash } from 'node:crypto';
import express, { type RequestHandler, Router } from 'express';
import type { Db } from '@works-api/prisma';
import { answerRecipientRequest, getRecipientRequest, LinkExpired } from '../domain/recipients/recipients';
import { ProblemError, isProblemCode, problemCodes } from '../domain/errors';
import { CONTROL_CHARACTERS, LONG_TEXT_MAX, longTextViolation } from '../domain/text';
import type { Schemas } from '../domain/schemas';
import { escapeHtml as e, formatDue } from '../mail/render';
import { secureHtml } from './docs';

/**
 * The recipient's page, `/r/<token>`: server-rendered, no script, no account. It shows the request (the work's
 * name, title, message, due date, who sent it) and, while the request is pending, an answer form that posts back
 * to the same address; once answered, validated or cancelled it shows that and takes nothing. Nothing else of the
 * tenant appears. No referrer is ever sent (the address holds the token), nothing is cached, the page is not
 * indexed, and it fits a 375 px screen. The API behind it is GET /v1/recipient/request and POST .../answer.
 */
const STYLE = `
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; }
  body { margin: 0; background: #f5f6f8; color: #1a1a1a; }
  main { box-sizing: border-box; max-width: 40rem; margin: 0 auto; padding: 1rem; }
  .card { background: #fff; border: 1px solid #d8dbe0; border-radius: 0.5rem; padding: 1rem 1.25rem; }
  h1 { font-size: 1.35rem; margin: 0.25rem 0 0.75rem; overflow-wrap: anywhere; }
  h2 { font-size: 1.1rem; margin: 0.25rem 0 0.5rem; }
  .card + .card { margin-top: 1rem; }
  .work { color: #4a5160; font-size: 0.95rem; margin: 0; overflow-wrap: anywhere; }
  .message { white-space: pre-wrap; overflow-wrap: anywhere; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 0.75rem; margin: 1rem 0; }
  dt { color: #4a5160; } dd { margin: 0; overflow-wrap: anywhere; }
  label { display: block; font-weight: 600; margin: 1rem 0 0.35rem; }
  textarea { box-sizing: border-box; width: 100%; min-height: 8rem; font: inherit; padding: 0.5rem;
             border: 1px solid #8a909c; border-radius: 0.3rem; }
  button { margin-top: 0.75rem; font: inherit; font-weight: 600; padding: 0.6rem 1.2rem; border: 0;
           border-radius: 0.3rem; background: #1d4ed8; color: #fff; cursor: pointer; width: 100%; }
  .status { padding: 0.75rem 1rem; border-radius: 0.3rem; background: #e8f5e9; border: 1px solid #9ccc9f; }
  .error { padding: 0.75rem 1rem; border-radius: 0.3rem; background: #fdecea; border: 1px solid #e6a19a; }
  .answer { white-space: pre-wrap; overflow-wrap: anywhere; }
  footer { color: #4a5160; font-size: 0.85rem; margin-top: 1rem; }
`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

export const RECIPIENT_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const fullName = (person: { firstName: string; lastName: string; email: string }) =>
  `${person.firstName} ${person.lastName}`.trim() || person.email;

/** A page of the recipient's pages (this one, and the stop-emails page): the same shell, style and footer. */
export function page(
  title: string,
  body: string,
  footer = 'This page is personal to the person the request was sent to. Do not share its address.',
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body><main>${body}
<footer>${e(footer)}</footer>
</main></body>
</html>
`;
}

const closedNote: Record<Schemas['RequestStatus'], string> = {
  pending: '',
  confirmed: 'You have answered this request. Thank you.',
  validated: 'You have answered this request, and it has been validated. Thank you.',
  cancelled: 'This request has been cancelled.',
};

function requestPage(request: Schemas['RecipientRequest'], notice?: { kind: 'error'; text: string }, draft = '') {
  const sender = fullName(request.sender);
  const parts = [
    `<div class="card">`,
    `<p class="work">${e(request.workName)}</p>`,
    `<h1>${e(request.title)}</h1>`,
    request.message ? `<p class="message">${e(request.message)}</p>` : '',
    `<dl><dt>From</dt><dd>${e(sender)} (${e(request.sender.email)})</dd>`,
    request.dueAt ? `<dt>Due</dt><dd>${e(formatDue(new Date(request.dueAt)))}</dd>` : '',
    `</dl>`,
    notice ? `<p class="error" role="alert">${e(notice.text)}</p>` : '',
  ];
  if (request.status === 'pending') {
    parts.push(
      `<form method="post">`,
      `<label for="answer">Your answer</label>`,
      `<textarea id="answer" name="answer" required maxlength="5000">${e(draft)}</textarea>`,
      `<button type="submit">Send my answer</button>`,
      `</form>`,
    );
  } else {
    parts.push(`<p class="status" role="status">${e(closedNote[request.status])}</p>`);
    if (request.answer !== null)
      parts.push(`<p><strong>Your answer</strong></p><p class="answer">${e(request.answer)}</p>`);
  }
  parts.push(`</div>`);
  return page(`${request.title} · ${sender}`, parts.join('\n'));
}

/** An expired link: what happened, and how to get a working one. Nothing of the request (the link opens nothing). */
const expiredPage = (ttlMs: number) =>
  page(
    'This link has expired',
    `<div class="card"><h1>This link has expired</h1>
<p>Answer links work for ${e(describeTtl(ttlMs))} after their email was sent, so that an old email cannot be used to
answer in your name. To answer, ask the person who sent you the request to send it again (they can, from their
console): the new email has a new link. If a newer email about this request reached you, use its link.</p></div>`,
  );

const describeTtl = (ms: number): string =>
  ms % 86_400_000 === 0
    ? `${ms / 86_400_000} day${ms === 86_400_000 ? '' : 's'}`
    : `${Math.round(ms / 3_600_000)} hour${ms === 3_600_000 ? '' : 's'}`;

const gonePage = () =>
  page(
    'This link no longer works',
    `<div class="card"><h1>This link no longer works</h1>
<p>The request was cancelled, or a newer email replaced this link. If you were expecting a request, look for the
most recent email about it, or ask its sender.</p></div>`,
  );

export function send(res: express.Response, status: number, html: string): void {
  secureHtml(res, RECIPIENT_PAGE_CSP);
  res.set('Cache-Control', 'no-store').set('X-Robots-Tag', 'noindex, nofollow');
  res.status(status).type('text/html; charset=utf-8').send(html);
}

const tokenOf = (req: express.Request): string => String(req.params.token ?? '');

/**
 * The form's answer, held to the API's rules for long text (domain/text.ts): what breaks them is a 400 page that
 * says why and gives the draft back, without the characters that cannot be kept (so it can be sent as it is).
 */
function answerProblem(answer: string): { text: string; draft: string } | undefined {
  if (answer === '') return { text: 'Write an answer before sending it.', draft: '' };
  const violation = longTextViolation(answer);
  if (violation === undefined) return undefined;
  const draft = answer.replace(CONTROL_CHARACTERS, '').replace(/\p{Cs}/gu, '');
  if (draft !== answer)
    return {
      text: 'Your answer held invisible control characters (such as escape codes), which cannot be kept. They are removed below: check the answer and send it again.',
      draft,
    };
  return { text: `An answer is at most ${LONG_TEXT_MAX.toLocaleString('en')} characters.`, draft };
}

const problemOf = (error: unknown) => (error instanceof ProblemError ? (error as ProblemError<string>) : undefined);
const isGone = (error: unknown) => problemOf(error)?.code === 'not_found';

/** Sends the page for a link that opens nothing: expired (410), or unknown, replaced or cancelled (404). */
function sendClosed(res: express.Response, error: unknown, ttlMs: number): void {
  if (error instanceof LinkExpired) send(res, 410, expiredPage(ttlMs));
  else send(res, 404, gonePage());
}

/**
 * GET and POST /r/:token, behind the recipient rate limits (per token and per address); links older than `ttlMs`
 * (ANSWER_LINK_TTL) are expired.
 */
export function recipientPageRoutes(db: Db, limits: RequestHandler[], ttlMs: number): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 10 });
  router.get('/r/:token', ...limits, async (req, res) => {
    try {
      send(res, 200, requestPage(await getRecipientRequest(db, tokenOf(req), ttlMs)));
    } catch (error) {
      if (!isGone(error)) throw error;
      sendClosed(res, error, ttlMs);
    }
  });
  router.post('/r/:token', ...limits, form, async (req, res) => {
    const token = tokenOf(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const answer = typeof body.answer === 'string' ? body.answer.trim() : '';
    try {
      const problem = answerProblem(answer);
      if (problem) {
        const request = await getRecipientRequest(db, token, ttlMs);
        return send(res, 400, requestPage(request, { kind: 'error', text: problem.text }, problem.draft));
      }
      await answerRecipientRequest(db, token, answer, ttlMs);
      // Post/redirect/get: a reload shows the answered page instead of posting again.
      res.redirect(303, req.originalUrl);
    } catch (error) {
      if (isGone(error)) return sendClosed(res, error, ttlMs);
      const code = problemOf(error)?.code;
      if (code !== undefined && isProblemCode(code) && problemCodes[code].status === 409) {
        const request = await getRecipientRequest(db, token, ttlMs).catch(() => null);
        if (!request) return send(res, 404, gonePage());
        return send(res, 409, requestPage(request, { kind: 'error', text: 'This request no longer takes an answer.' }));
      }
      throw error;
    }
  });
  return router;
}
