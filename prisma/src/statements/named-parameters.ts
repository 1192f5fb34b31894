/**
 * Statements with named parameters: `:workId` where PostgreSQL wants `$1`, so a statement built from parts (the
 * outbox row's columns, the mail allowance's call) needs no offsets spliced in, and a value is found by its name
 * rather than by counting. A cast keeps its `::type`; quoted text and comments are left alone. Each name is one parameter,
 * however often the statement uses it. Every name used must have a value and every value given must be used:
 * either mistake throws before anything is sent.
 */
export type StatementParams = Readonly<Record<string, unknown>>;

interface Compiled {
  text: string;
  names: string[];
}

// Statements are a fixed set of texts (or a few variants of one), so each is compiled once.
const compiled = new Map<string, Compiled>();

/** `text` with `:name` parameters → PostgreSQL's text and the values in the order it numbers them. */
export function namedStatement(text: string, params: StatementParams): { text: string; values: unknown[] } {
  let statement = compiled.get(text);
  if (!statement) compiled.set(text, (statement = compile(text)));
  const values = statement.names.map((name) => {
    if (!Object.hasOwn(params, name)) throw new Error(`statement parameter :${name} has no value`);
    return params[name];
  });
  if (statement.names.length !== Object.keys(params).length) {
    const unused = Object.keys(params).filter((name) => !statement.names.includes(name));
    throw new Error(`statement does not use ${unused.map((name) => `:${name}`).join(', ')}`);
  }
  return { text: statement.text, values };
}

function compile(text: string): Compiled {
  const names: string[] = [];
  // Comments, quoted text and identifiers first (kept as they are: a comment's apostrophe opens no quote), then
  // `::` casts (kept), then `:name` (a parameter) where no letter or digit comes right before the colon (an array
  // slice such as `[1:n]` stays SQL).
  const skipped =
    /--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'|"(?:[^"]|"")*"|::|(?<![A-Za-z0-9_]):([A-Za-z_][A-Za-z0-9_]*)/g;
  const out = text.replace(skipped, (match, name?: string) => {
    if (name === undefined) return match;
    let index = names.indexOf(name);
    if (index === -1) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
  return { text: out, names };
}
