// Bulk send from a spreadsheet: reads a CSV (columns email, first name, last name, and optionally title, message,
// due date), sends its rows as batches of up to 1,000 requests (createRequestBatch: all or nothing per batch, one
// Idempotency-Key per batch, so a retry after a network error never sends twice), and prints what was created.
// A bad row makes the server answer 400 naming every bad row (errors[].path is /body/items/<index>/<field>): this
// prints them as CSV line numbers, and sends nothing of that batch.
//
// Usage: WORKS_API_KEY=wk_… node packages/client/examples/bulk-send.mjs <tenant_id> <work_id> recipients.csv \
//          [--title "Confirm your balance"] [--message "…"] [--due 2030-01-31T17:00:00Z] [--base-url https://…]
import { readFileSync } from 'node:fs';
import { createClient, isProblem } from '@works-api/client';

/** RFC 4180 CSV (quotes, doubled quotes, commas and line breaks inside quotes) or tab-separated (a spreadsheet's paste). */
export function parseCsv(text) {
  const delimiter = text.split('\n', 1)[0].includes('\t') ? '\t' : ',';
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === delimiter) (row.push(field), (field = ''));
    else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      (row.push(field), rows.push(row), (row = []), (field = ''));
    } else field += char;
  }
  if (field !== '' || row.length > 0) (row.push(field), rows.push(row));
  return rows.filter((cells) => cells.some((cell) => cell.trim() !== ''));
}

const COLUMNS = {
  email: ['email', 'e-mail', 'email address'],
  firstName: ['first name', 'firstname', 'first_name', 'given name'],
  lastName: ['last name', 'lastname', 'last_name', 'family name', 'surname'],
  title: ['title', 'subject'],
  message: ['message', 'body'],
  dueAt: ['due date', 'due', 'dueat', 'due_at', 'due at'],
};

/** The batch items of a CSV whose first row names its columns (in any order, any case). */
export function itemsFromCsv(text) {
  const [header = [], ...rows] = parseCsv(text.replace(/^\uFEFF/, ''));
  const names = header.map((name) => name.trim().toLowerCase());
  const index = Object.fromEntries(
    Object.entries(COLUMNS).map(([key, aliases]) => [key, names.findIndex((name) => aliases.includes(name))]),
  );
  if (index.email < 0) throw new Error('the CSV has no email column');
  const cell = (cells, key) => (index[key] >= 0 ? (cells[index[key]] ?? '').trim() : '');
  return rows.map((cells) => {
    const item = { recipient: { email: cell(cells, 'email') } };
    if (cell(cells, 'firstName')) item.recipient.firstName = cell(cells, 'firstName');
    if (cell(cells, 'lastName')) item.recipient.lastName = cell(cells, 'lastName');
    if (cell(cells, 'title')) item.title = cell(cells, 'title');
    if (cell(cells, 'message')) item.message = cell(cells, 'message');
    const due = cell(cells, 'dueAt');
    // A date alone (2030-01-31) is due at the end of that day, UTC.
    if (due) item.dueAt = /^\d{4}-\d{2}-\d{2}$/.test(due) ? `${due}T23:59:59Z` : due;
    return item;
  });
}

async function main() {
  const [tenantId, workId, file, ...rest] = process.argv.slice(2);
  if (!tenantId || !workId || !file) {
    console.error('usage: bulk-send.mjs <tenant_id> <work_id> <file.csv> [--title …] [--message …] [--due …]');
    process.exit(2);
  }
  const option = (name) => {
    const at = rest.indexOf(`--${name}`);
    return at >= 0 ? rest[at + 1] : undefined;
  };
  const defaults = {};
  if (option('title')) defaults.title = option('title');
  if (option('message')) defaults.message = option('message');
  if (option('due')) defaults.dueAt = option('due');
  const api = createClient({
    baseUrl: option('base-url') ?? process.env.WORKS_API_URL ?? 'https://api.example.com',
    apiKey: process.env.WORKS_API_KEY,
  });
  const items = itemsFromCsv(readFileSync(file, 'utf8'));
  let failed = false;
  for (let start = 0; start < items.length; start += 1000) {
    const { data, error } = await api.createRequestBatch({
      params: { path: { tenant_id: tenantId, work_id: workId } },
      body: { defaults, items: items.slice(start, start + 1000) },
    });
    if (data) {
      for (const request of data.batch.requests)
        console.log(`${request.id}  ${request.recipient.email}  ${request.emailsStopped ? 'emails stopped' : 'sent'}`);
      continue;
    }
    failed = true;
    if (!isProblem(error)) throw new Error(`unexpected answer: ${JSON.stringify(error)}`);
    console.error(`rows ${start + 2} to ${Math.min(start + 1000, items.length) + 1} not sent: ${error.detail}`);
    for (const { path, message } of error.errors ?? []) {
      const [, , , index] = path.split('/');
      // Line numbers of the file: its header is line 1.
      console.error(/^\d+$/.test(index ?? '') ? `  line ${start + Number(index) + 2}: ${message}` : `  ${message}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
