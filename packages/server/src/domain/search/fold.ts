import type { SearchTerms } from '@works-api/prisma';
import { ProblemError } from '../errors';
import { aboutField, boundMessages, ruleMessages } from '../validation-messages';

/**
 * Search text, folded the same way when it is stored and when it is searched: accents removed (NFKD, then the
 * combining marks dropped; compatibility forms such as ligatures and full-width letters become plain ones), lower
 * case, and every run of characters that are neither letters nor digits made one
 * space. PGlite has no `unaccent`, so the application folds, into a column both databases index.
 *
 * A stored search text starts with a space and has one space between words (` rapport financier ete`); the database
 * keeps every prefix of its words (`search_prefixes`), so a word of a query matches the start of a stored word:
 * what a person typing expects ("rap" finds "Rapport", "grace" finds grace@example.com).
 */
const COMBINING_MARKS = /\p{M}+/gu;
const NOT_A_WORD = /[^\p{L}\p{N}]+/gu;

/** The words of `text`, folded: `Rapport financier Été` → `['rapport', 'financier', 'ete']`. */
export function foldedWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(NOT_A_WORD, ' ')
    .split(' ')
    .filter((word) => word !== '');
}

/**
 * The most characters (UTF-16 code units, never fewer than PostgreSQL's characters) a stored search text holds.
 * Folding can grow a text: NFKD turns one character, U+FDFA, into 18 (four words), so a 5,000-character message
 * would store and index about 90,000. The longest ordinary request (every field at its limit) folds to under
 * 6,000, which this keeps whole. The database's `search_prefixes` reads no further either (migration
 * search_text_capped), whoever wrote the text.
 */
export const MAX_SEARCH_TEXT_LENGTH = 8000;

/**
 * The stored search text of a row made of `parts` (its name, slug, description, ...): their words in order, each
 * after one space, as many as fit in MAX_SEARCH_TEXT_LENGTH; a word that does not fit is left out and the next ones
 * still tried, so one huge word (5,000 ligatures fold to a 15,000-letter word) does not hide the fields after it.
 */
export function searchText(...parts: string[]): string {
  let text = '';
  for (const word of parts.flatMap(foldedWords)) {
    if (text.length + 1 + word.length <= MAX_SEARCH_TEXT_LENGTH) text += ` ${word}`;
  }
  return text;
}

/** Stored search text of a work. */
export const workSearchText = (work: { name: string; slug: string; description: string }): string =>
  searchText(work.name, work.slug, work.description);

/** Stored search text of a request: what a member looks it up by (title, message, recipient). */
export const requestSearchText = (request: {
  title: string;
  message: string;
  recipientEmail: string;
  recipientFirstName: string;
  recipientLastName: string;
}): string =>
  searchText(
    request.title,
    request.message,
    request.recipientEmail,
    request.recipientFirstName,
    request.recipientLastName,
  );

/** The most words a search takes: each is one more index condition. */
export const MAX_QUERY_WORDS = 8;

/**
 * The words of a search `q` (every one must match the start of a word of the row), or a 400 when it has none or
 * too many. Its length is bounded by the contract.
 */
export function queryWords(q: string): string[] {
  const words = [...new Set(foldedWords(q))];
  if (words.length === 0) throw badQuery(ruleMessages.searchWord);
  if (words.length > MAX_QUERY_WORDS) throw badQuery(boundMessages.atMostWords(MAX_QUERY_WORDS));
  return words;
}

function badQuery(rule: string): ProblemError {
  const message = aboutField('/query/q', rule);
  return new ProblemError('validation_failed', `${message[0]!.toUpperCase()}${message.slice(1)}.`, {
    errors: [{ path: '/query/q', message }],
  });
}

/**
 * The longest prefix of a word the database keeps (migration 20261127020000_search_prefixes: the generated column
 * `search_prefixes` holds every prefix of every word of `search`, up to this length).
 */
export const MAX_PREFIX_LENGTH = 16;

/**
 * What a search for `q` looks up (the database package turns it into a condition: statements/search.ts): each
 * word's first MAX_PREFIX_LENGTH characters as a prefix key, and the words longer than that checked against the text.
 */
export function searchTerms(q: string): SearchTerms {
  const words = queryWords(q);
  return {
    prefixes: [...new Set(words.map((word) => word.slice(0, MAX_PREFIX_LENGTH)))],
    longWords: words.filter((word) => word.length > MAX_PREFIX_LENGTH),
  };
}
