import { Link } from 'wouter';
import type { Request } from '../api/types';
import { formatTime, personName } from '../components/format';
import { StatusBadge } from './request';

/** Requests as rows: title (a link to the request), recipient, due date and status. */
export function RequestRows({ tenantId, requests }: { tenantId: string; requests: Request[] }) {
  return (
    <ul className="rows">
      {requests.map((request) => (
        <li key={request.id} className="row">
          <Link href={`/tenants/${tenantId}/works/${request.workId}/requests/${request.id}`} className="row-title">
            {request.title}
          </Link>
          <span className="muted">
            to {personName(request.recipient) || request.recipient.email}
            {request.dueAt && <> · due {formatTime(request.dueAt)}</>}
          </span>
          <span className="row-meta">
            <StatusBadge status={request.status} /> <EmailStatus request={request} />
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Where the request's email is: queued, sent, failed, or dropped (the recipient stopped this tenant's emails). */
export function EmailStatus({ request }: { request: Request }) {
  if (request.emailsStopped) return <span className="badge badge-muted">emails stopped</span>;
  if (!request.emailDelivery) return null;
  return <span className="badge badge-muted">email {request.emailDelivery.status}</span>;
}
