import { useQuery } from '@tanstack/react-query';
import { isProblem, ProblemError } from '@works-api/client';
import { useSession } from './auth';

/**
 * The dev mailbox: without SMTP_URL the server keeps the emails it would have sent and returns them at
 * GET /dev/mailbox (outside /v1 and the contract: it is a development aid). With SMTP configured the route does
 * not exist and answers 404; that is how the console knows whether to show its Mailbox. The server shows each
 * caller only the emails of their own tenants' requests and those addressed to them.
 */
export interface DevMail {
  id: string;
  /** When the server "sent" it (ISO 8601). */
  at: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The request it is about, when it is a request's email or reminder. */
  request: { tenantId: string; workId: string; id: string } | null;
}

type AnyProblem = ConstructorParameters<typeof ProblemError>[0];

export const devMailboxKey = ['devMailbox'] as const;

/** The kept emails, newest first; null when the server has no dev mailbox (SMTP is configured). */
export async function fetchDevMailbox(): Promise<DevMail[] | null> {
  // The session cookie goes along (same origin); no Authorization header.
  const response = await fetch(`${window.location.origin}/dev/mailbox`, {
    headers: { Accept: 'application/json' },
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (response.status === 404) return null;
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    throw new ProblemError(
      isProblem(body)
        ? (body as AnyProblem)
        : ({
            type: 'about:blank',
            title: 'Unexpected response',
            status: response.status,
            detail: `The dev mailbox answered ${response.status}.`,
            instance: '/dev/mailbox',
            code: 'unexpected_response',
          } satisfies AnyProblem),
      response,
    );
  }
  return (body as { messages: DevMail[] }).messages;
}

/** Shared by the navigation (is there a mailbox?) and the Mailbox page (what is in it). */
export function useDevMailbox(options: { refetchInterval?: number } = {}) {
  useSession(); // only for a signed-in person
  return useQuery({
    queryKey: devMailboxKey,
    queryFn: () => fetchDevMailbox(),
    // Emails leave through the outbox a moment after the change that queued them: the page keeps looking.
    ...(options.refetchInterval !== undefined && { refetchInterval: options.refetchInterval }),
  });
}
