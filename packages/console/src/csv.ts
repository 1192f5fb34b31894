/**
 * Bulk send's spreadsheet (issue 41): a CSV file, or rows pasted from a spreadsheet (tab-separated), with columns
 * email, first name, last name and optionally title, message and due date, read into the rows of a batch and
 * checked as the server would check them, so a preview flags each bad row with its reason before anything is sent.
 * The server checks again (400 naming every bad item by index: `rowProblemsFrom` maps them back to rows).
 */

/** The most rows one batch takes (the contract's maxItems). */
export const MAX_BATCH_ROWS = 1000;

/** RFC 4180 CSV (quoted fields, doubled quotes, separators and line breaks inside quotes), or tab-separated. */
export function parseCsv(text: string): string[][] {
  const firstLine = text.split('\n', 1)[0] ?? '';
  const delimiter = firstLine.includes('\t') ? '\t' : firstLine.includes(';') && !firstLine.includes(',') ? ';' : ',';
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === delimiter) {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += char;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

const COLUMNS = {
  email: ['email', 'e-mail', 'email address', 'mail'],
  firstName: ['first name', 'firstname', 'first_name', 'given name'],
  lastName: ['last name', 'lastname', 'last_name', 'family name', 'surname'],
  title: ['title', 'subject'],
  message: ['message', 'body'],
  due: ['due date', 'due', 'dueat', 'due_at', 'due at'],
} as const;
type Column = keyof typeof COLUMNS;

/** One row of the sheet as the preview shows it. */
export interface SheetRow {
  /** Its line in the file (the header is line 1). */
  line: number;
  email: string;
  firstName: string;
  lastName: string;
  title: string;
  message: string;
  due: string;
  /** What is wrong with it, in words; empty for a good row. */
  problems: string[];
}

export interface Sheet {
  rows: SheetRow[];
  /** What is wrong with the sheet as a whole (no email column, too many rows). */
  problems: string[];
}

/** An item of the batch, as the contract's RequestBatchItem. */
export interface BatchItem {
  title?: string;
  message?: string;
  dueAt?: string;
  recipient: { email: string; firstName?: string; lastName?: string };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/;

/** A due date as ISO 8601 UTC: a date alone is due at the end of that day (UTC); undefined when unreadable. */
export function dueAtOf(text: string): string | undefined {
  const value = text.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const end = new Date(`${value}T23:59:59Z`);
    return Number.isNaN(end.getTime()) || end.toISOString().slice(0, 10) !== value ? undefined : end.toISOString();
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const instant = new Date(value);
  return Number.isNaN(instant.getTime()) ? undefined : instant.toISOString();
}

/** The rows of a sheet, each checked; `defaultTitle` is the title of the rows without one. */
export function readSheet(text: string, defaultTitle: string, now = new Date()): Sheet {
  const [header = [], ...body] = parseCsv(text.replace(/^\uFEFF/, ''));
  const names = header.map((name) => name.trim().toLowerCase());
  const at = Object.fromEntries(
    (Object.keys(COLUMNS) as Column[]).map((column) => [
      column,
      names.findIndex((name) => (COLUMNS[column] as readonly string[]).includes(name)),
    ]),
  ) as Record<Column, number>;
  const problems: string[] = [];
  if (text.trim() === '') return { rows: [], problems };
  if (at.email < 0) problems.push('The first line must name the columns, among them “email”.');
  const rows = body
    .map((cells, index) => ({ cells, line: index + 2 }))
    .filter(({ cells }) => cells.some((cell) => cell.trim() !== ''))
    .map(({ cells, line }) => {
      const cell = (column: Column) => (at[column] >= 0 ? (cells[at[column]] ?? '').trim() : '');
      const row: SheetRow = {
        line,
        email: cell('email'),
        firstName: cell('firstName'),
        lastName: cell('lastName'),
        title: cell('title'),
        message: cell('message'),
        due: cell('due'),
        problems: [],
      };
      row.problems = rowProblems(row, defaultTitle, now);
      return row;
    });
  if (rows.length > MAX_BATCH_ROWS)
    problems.push(`A batch takes at most ${MAX_BATCH_ROWS} rows; this one has ${rows.length}.`);
  return { rows, problems };
}

function rowProblems(row: SheetRow, defaultTitle: string, now: Date): string[] {
  const problems: string[] = [];
  if (!row.email) problems.push('email is missing');
  else if (!EMAIL.test(row.email) || row.email.length > 254) problems.push(`“${row.email}” is not an email address`);
  if (!row.title && !defaultTitle.trim()) problems.push('title is missing (give it here or as the default title)');
  if ([...row.title].length > 200) problems.push('title must be at most 200 characters');
  for (const [name, value] of [
    ['first name', row.firstName],
    ['last name', row.lastName],
  ] as const)
    if ([...value].length > 200) problems.push(`${name} must be at most 200 characters`);
  if ([...row.message].length > 5000) problems.push('message must be at most 5000 characters');
  for (const [name, value] of [
    ['title', row.title],
    ['first name', row.firstName],
    ['last name', row.lastName],
  ] as const)
    if (CONTROL.test(value)) problems.push(`${name} must not contain control characters`);
  if (row.due) {
    const dueAt = dueAtOf(row.due);
    if (!dueAt) problems.push(`due date “${row.due}” is not a date such as 2030-01-31 or 2030-01-31T17:00:00Z`);
    else if (new Date(dueAt) <= now) problems.push(`due date ${row.due} is not in the future`);
  }
  return problems;
}

/** The good rows as the batch's items, in order. */
export function itemsOf(rows: SheetRow[]): BatchItem[] {
  return rows.map((row) => ({
    ...(row.title ? { title: row.title } : {}),
    ...(row.message ? { message: row.message } : {}),
    ...(row.due ? { dueAt: dueAtOf(row.due)! } : {}),
    recipient: {
      email: row.email,
      ...(row.firstName ? { firstName: row.firstName } : {}),
      ...(row.lastName ? { lastName: row.lastName } : {}),
    },
  }));
}

/** The server's 400 `errors` (`/body/items/3/recipient/email`) as problems of the rows they name, by row index. */
export function rowProblemsFrom(errors: ReadonlyArray<{ path: string; message: string }>): Map<number, string[]> {
  const byRow = new Map<number, string[]>();
  for (const { path, message } of errors) {
    const match = /^\/body\/items\/(\d+)(?:\/|$)/.exec(path);
    if (!match) continue;
    const index = Number(match[1]);
    byRow.set(index, [...(byRow.get(index) ?? []), message.replace(/^items\.\d+\./, '')]);
  }
  return byRow;
}
