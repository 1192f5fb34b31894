import { useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useMemo, useState } from 'react';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { dataOf, toProblem } from '../api/problems';
import { keys } from '../api/queries';
import { itemsOf, readSheet, rowProblemsFrom } from '../csv';
import { TextArea, TextField } from '../components/fields';
import { Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

const SAMPLE = 'email,first name,last name,title,message,due date';

/**
 * Bulk send from a spreadsheet (issue 41): a CSV file, or rows pasted from a spreadsheet, previewed row by row with
 * each bad row flagged and its reason before anything is sent; then one call (createRequestBatch) sends them all,
 * or none. The sheet's text stays editable: fix a flagged row there and the preview follows.
 */
export function BulkSend({ tenantId, workId }: { tenantId: string; workId: string }) {
  const [open, setOpen] = useState(false);
  return open ? (
    <BulkSendForm tenantId={tenantId} workId={workId} />
  ) : (
    <Section title="Send to many" id="bulk-send">
      <p className="muted">Send one request to each row of a spreadsheet (a CSV file, or rows pasted), in one go.</p>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Send from a spreadsheet…
      </button>
    </Section>
  );
}

function BulkSendForm({ tenantId, workId }: { tenantId: string; workId: string }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [defaultTitle, setDefaultTitle] = useState('');
  const [defaultMessage, setDefaultMessage] = useState('');
  const [sent, setSent] = useState<number | null>(null);
  const sheet = useMemo(() => readSheet(text, defaultTitle), [text, defaultTitle]);
  const body = {
    ...(defaultTitle.trim() || defaultMessage
      ? {
          defaults: {
            ...(defaultTitle.trim() ? { title: defaultTitle } : {}),
            ...(defaultMessage ? { message: defaultMessage } : {}),
          },
        }
      : {}),
    items: itemsOf(sheet.rows),
  };
  const send = useCreate(
    (batch: typeof body, key) =>
      dataOf(
        api.createRequestBatch({
          params: { path: { tenant_id: tenantId, work_id: workId }, header: { 'Idempotency-Key': key } },
          body: batch,
        }),
      ),
    (data) => {
      setSent(data.batch.count);
      setText('');
      void queryClient.invalidateQueries({ queryKey: keys.requests(tenantId, workId) });
    },
  );
  // The server's findings for the rows it was last sent (it names each bad item by its index).
  const serverProblems = send.error ? rowProblemsFrom(toProblem(send.error).errors ?? []) : new Map<number, string[]>();
  const bad = sheet.rows.filter((row) => row.problems.length > 0).length;
  const readFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    setSent(null);
    send.reset();
    setText(await file.text());
  };
  return (
    <Section title="Send to many" id="bulk-send">
      <p className="muted">
        Upload a CSV, or paste rows from a spreadsheet, with the columns <code>{SAMPLE}</code> (the last three
        optional). Each row becomes a request; all are sent in one go, or none.
      </p>
      <div className="field">
        <label htmlFor="bulk-file">CSV file</label>
        <input id="bulk-file" type="file" accept=".csv,.tsv,.txt,text/csv" onChange={(event) => void readFile(event)} />
      </div>
      <TextArea
        label="Rows"
        hint="The file's text, or rows pasted from a spreadsheet; fix a flagged row here."
        value={text}
        rows={6}
        onChange={(event) => {
          setSent(null);
          send.reset();
          setText(event.target.value);
        }}
      />
      <TextField
        label="Default title"
        hint="For the rows without a title"
        value={defaultTitle}
        onChange={(event) => setDefaultTitle(event.target.value)}
      />
      <TextArea
        label="Default message"
        hint="Optional, for the rows without a message"
        value={defaultMessage}
        onChange={(event) => setDefaultMessage(event.target.value)}
      />
      {sheet.problems.map((problem) => (
        <p key={problem} className="alert alert-error" role="alert">
          {problem}
        </p>
      ))}
      {sheet.rows.length > 0 && (
        <>
          <p data-testid="bulk-summary">
            {sheet.rows.length} {sheet.rows.length === 1 ? 'row' : 'rows'}
            {bad > 0 ? `, ${bad} to fix before sending` : ', ready to send'}
          </p>
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Preview of the rows">
            <table className="preview" aria-label="Preview">
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  <th scope="col">Title</th>
                  <th scope="col">Due</th>
                  <th scope="col">Check</th>
                </tr>
              </thead>
              <tbody>
                {sheet.rows.map((row, index) => {
                  const problems = [...row.problems, ...(serverProblems.get(index) ?? [])];
                  return (
                    <tr key={row.line} className={problems.length > 0 ? 'row-bad' : undefined} data-testid="bulk-row">
                      <td>{row.line}</td>
                      <td>{row.email}</td>
                      <td>{[row.firstName, row.lastName].filter(Boolean).join(' ')}</td>
                      <td>{row.title || <span className="muted">{defaultTitle || '—'}</span>}</td>
                      <td>{row.due}</td>
                      <td>{problems.length > 0 ? <span className="field-error">{problems.join('; ')}</span> : 'ok'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
      <button
        type="button"
        className="button button-primary"
        disabled={sheet.rows.length === 0 || bad > 0 || sheet.problems.length > 0 || send.isPending}
        aria-busy={send.isPending || undefined}
        onClick={() => send.submit(body)}
      >
        {send.isPending ? 'Sending…' : `Send ${sheet.rows.length} ${sheet.rows.length === 1 ? 'request' : 'requests'}`}
      </button>
      {sent !== null && (
        <p className="alert alert-info" role="status">
          Sent {sent} {sent === 1 ? 'request' : 'requests'}.
        </p>
      )}
      {send.error && <ProblemAlert error={send.error} />}
    </Section>
  );
}
