import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The statement-plans test's checked-in files (test/integration/statement-plans/<operation>.sql): each operation's
 * statements as sent and, written on PostgreSQL, their plans' shapes, so that a changed query or plan shows in a
 * diff. A run compares what it sent with the files (on PGlite the texts only: it keeps the plan lines as they are),
 * or rewrites them when asked.
 *
 * A file holds sections, `-- operation: <name>`, each with its statements: a statement's text up to its `;`, then
 * its plan lines (comments, written on PostgreSQL only).
 */

/** A statement as its section shows it: normalised text; plan lines when this run has them (PostgreSQL). */
export interface FiledStatement {
  text: string;
  plans?: string[];
}

interface Section {
  name: string;
  /** As written in the file, trimmed. */
  written: string;
  statements: Required<FiledStatement>[];
}

const SECTION = '-- operation: ';
const HEADER = [
  '-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends',
  '-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file',
  '-- (docs/development.md).',
].join('\n');
/** What a statement's plan lines are until a run on PostgreSQL writes them. */
const PLANS_TO_WRITE = ['-- plan: written by a run on PostgreSQL'];

/**
 * A statement's text as code: blank lines dropped, trailing spaces trimmed, the lines after the first indented from
 * the least indented of them, and runs of spaces inside a line made one.
 */
export function normalisedText(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const [first = '', ...rest] = lines;
  const indent = Math.min(...rest.map((line) => line.length - line.trimStart().length));
  const collapsed = (line: string) => line.trimEnd().replace(/(\S)\s+/g, '$1 ');
  return [first.trim(), ...rest.map((line) => line.slice(indent))].map(collapsed).join('\n');
}

/** A statement's plan lines: its plan's shape (test/support/plan-shape.ts), and its generic plan's when prepared. */
export function planLines(plan: string[] | undefined, genericPlan: string[] | undefined): string[] {
  const tree = (lines: string[]) => lines.map((line) => `--   ${line}`);
  return [
    ...(plan ? ['-- plan:', ...tree(plan)] : ['-- plan: none']),
    ...(genericPlan ? ['-- generic plan (sent prepared):', ...tree(genericPlan)] : []),
  ];
}

/** The file an operation's section goes to: its name up to the first `(`, `:`, `,` or `#`, in kebab case. */
export function fileOf(operation: string): string {
  const head = operation.split(/[(:,#]/)[0]!.trim();
  const kebab = head
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `${kebab}.sql`;
}

const renderStatement = (statement: Required<FiledStatement>) => [`${statement.text};`, ...statement.plans].join('\n');
const renderSection = (name: string, statements: Required<FiledStatement>[]) =>
  [`${SECTION}${name}`, ...statements.map(renderStatement)].join('\n\n');
const renderFile = (sections: string[]) => `${[HEADER, ...sections].join('\n\n')}\n`;

/** A statement's block: its text up to the last line that ends in `;`, then its plan lines. */
function parseStatement(block: string): Required<FiledStatement> {
  const lines = block.split('\n');
  const end = lines.findLastIndex((line) => line.endsWith(';')) + 1;
  return { text: lines.slice(0, end).join('\n').replace(/;$/, ''), plans: lines.slice(end) };
}

function parseFile(content: string): Section[] {
  return content
    .split(new RegExp(`^(?=${SECTION})`, 'm'))
    .filter((part) => part.startsWith(SECTION))
    .map((part) => {
      const [title, ...blocks] = part.trim().split(/\n\n+/);
      return { name: title!.slice(SECTION.length), written: part.trim(), statements: blocks.map(parseStatement) };
    });
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Texts in order, and the same text by its plans: what concurrent statements send first varies. */
const byTextThenPlans = (a: Required<FiledStatement>, b: Required<FiledStatement>) =>
  compare(a.text, b.text) || compare(a.plans.join('\n'), b.plans.join('\n'));

/** Why a text cannot be filed: a value written into it (it would change from run to run). */
function unfileable(text: string): string | undefined {
  if (/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/i.test(text))
    return 'a UUID is written into its text: send it as a parameter';
  if (/\d{4}-\d\d-\d\d[T ]\d\d:/.test(text)) return 'a moment is written into its text: send it as a parameter';
  return undefined;
}

/** Each statement with the plan lines the file has for the same text (in the file's order), where this run has none. */
function withPlansOf(statements: FiledStatement[], written: Section | undefined): Required<FiledStatement>[] {
  const unused = [...(written?.statements ?? [])];
  return statements.map((statement) => {
    if (statement.plans) return { text: statement.text, plans: statement.plans };
    const at = unused.findIndex((old) => old.text === statement.text);
    const plans = at >= 0 ? unused.splice(at, 1)[0]!.plans : PLANS_TO_WRITE;
    return { text: statement.text, plans };
  });
}

/** `received` is `expected`, or an error that starts with `message` and shows the difference line by line. */
function expectSame(received: string, expected: string, message: string): void {
  try {
    expect(received).toBe(expected);
  } catch (error) {
    if (error instanceof Error) error.message = `${message}\n\n${error.message}`;
    throw error;
  }
}

export interface StatementFilesOptions {
  dir: string;
  /** The run has plans (PostgreSQL): they are compared and written; else the files' plan lines stay as they are. */
  plans: boolean;
  /** Write the files instead of comparing. */
  rewrite: boolean;
  /** How to rewrite them, for the failure message. */
  howToRewrite: string;
}

export class StatementFiles {
  private readonly written = new Map<string, Map<string, Section>>();
  private readonly produced = new Map<string, Map<string, string>>();

  constructor(private readonly options: StatementFilesOptions) {}

  /** Files an operation's statements; unless rewriting, fails when its section differs from the file's. */
  record(operation: string, statements: FiledStatement[]): void {
    for (const { text } of statements) {
      const why = unfileable(text);
      if (why) throw new Error(`${operation}: cannot file a statement: ${why}.\n${text}`);
    }
    const file = fileOf(operation);
    const written = this.writtenSections(file).get(operation);
    const filed = withPlansOf(statements, written).sort(byTextThenPlans);
    const sections = this.produced.get(file) ?? new Map<string, string>();
    if (sections.has(operation)) throw new Error(`two operations are named "${operation}"`);
    this.produced.set(file, sections.set(operation, renderSection(operation, filed)));
    if (!this.options.rewrite) this.expectAsWritten(file, operation, filed, written);
  }

  /** A run without plans of its own (PGlite) compares the texts only. */
  private expectAsWritten(file: string, operation: string, filed: Required<FiledStatement>[], written?: Section) {
    const { plans, dir, howToRewrite } = this.options;
    const shown = (statements: Required<FiledStatement>[]) =>
      renderSection(operation, plans ? statements : statements.map(({ text }) => ({ text, plans: [] })));
    const what = written ? `the statements it sends${plans ? ' or their plans' : ''} changed` : 'not in the file yet';
    expectSame(
      shown(filed),
      written ? shown(written.statements) : '',
      `${path.basename(dir)}/${file}, operation "${operation}": ${what}. ${howToRewrite}`,
    );
  }

  /**
   * After the run: rewrites the files, or, when the run was whole (every test ran and passed), fails on files and
   * sections that no operation wrote. A partial rewrite keeps the sections it did not run, in place.
   */
  finish(wholeRun: boolean): void {
    if (this.options.rewrite) this.rewrite(wholeRun);
    else if (wholeRun) this.expectNothingStale();
  }

  private rewrite(wholeRun: boolean): void {
    mkdirSync(this.options.dir, { recursive: true });
    for (const [file, sections] of this.produced) {
      const content = renderFile(wholeRun ? [...sections.values()] : this.mergedSections(file, sections));
      const target = path.join(this.options.dir, file);
      if (!existsSync(target) || readFileSync(target, 'utf8') !== content) writeFileSync(target, content);
    }
    if (wholeRun) for (const file of this.staleFiles()) rmSync(path.join(this.options.dir, file));
  }

  /** The file's sections in its order, those this run wrote replaced, then the new ones. */
  private mergedSections(file: string, sections: Map<string, string>): string[] {
    const written = this.writtenSections(file);
    return [
      ...[...written.values()].map((old) => sections.get(old.name) ?? old.written),
      ...[...sections].filter(([name]) => !written.has(name)).map(([, section]) => section),
    ];
  }

  private expectNothingStale(): void {
    const stale = this.staleFiles();
    if (stale.length > 0)
      throw new Error(`No operation writes ${stale.join(', ')} any more. ${this.options.howToRewrite}`);
    for (const [file, sections] of this.produced) {
      const target = path.join(this.options.dir, file);
      expectSame(
        renderFile([...sections.values()]),
        readFileSync(target, 'utf8'),
        `${path.basename(this.options.dir)}/${file} holds sections no operation wrote, or in another order. ${this.options.howToRewrite}`,
      );
    }
  }

  private staleFiles(): string[] {
    if (!existsSync(this.options.dir)) return [];
    return readdirSync(this.options.dir)
      .filter((file) => file.endsWith('.sql') && !this.produced.has(file))
      .sort();
  }

  private writtenSections(file: string): Map<string, Section> {
    let sections = this.written.get(file);
    if (!sections) {
      const target = path.join(this.options.dir, file);
      const content = existsSync(target) ? readFileSync(target, 'utf8') : '';
      sections = new Map(parseFile(content).map((section) => [section.name, section]));
      this.written.set(file, sections);
    }
    return sections;
  }
}
