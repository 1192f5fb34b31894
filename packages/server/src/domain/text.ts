import { boundMessages, ruleMessages } from './validation-messages';

/**
 * The rules of the contract's text schemas that no portable regular expression can state (openapi/README.md,
 * "Portable patterns"): the schemas refuse control characters in every regex dialect alike; these are the rest,
 * which the server checks after the validator, keyed by the component schema a body field refers to.
 */
export const textRules = {
  /** 1 to 200 code points once surrounding white space (any Unicode white space) is trimmed. */
  Name: { trimmed: { min: 1, max: 200 } },
  /** At most 200 code points once trimmed; empty is fine. */
  PersonName: { trimmed: { min: 0, max: 200 } },
  /** Only the surrogate rule: its 5,000 code points are `maxLength`, which JSON Schema counts in code points. */
  LongText: {},
  /** A webhook endpoint's description: LongText's rules, 500 code points. */
  WebhookEndpointDescription: {},
  /** The recipient's answer: LongText's rules, and not empty. */
  Answer: {},
} as const satisfies Record<string, { trimmed?: { min: number; max: number } }>;

export type TextSchema = keyof typeof textRules;

export const isTextSchema = (name: string): name is TextSchema => Object.hasOwn(textRules, name);

// In Unicode mode a paired surrogate is read as one astral code point, so only an unpaired one is \p{Cs}.
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/**
 * The control characters every text schema refuses (their pattern): C0 and C1 but tab, line feed and carriage
 * return. ANSI escape sequences start with one (ESC), so none can be stored.
 */
// eslint-disable-next-line no-control-regex -- naming control characters is the point
export const CONTROL_CHARACTERS = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/g;

/** LongText's limit, in code points. */
export const LONG_TEXT_MAX = 5000;

/**
 * Every rule of LongText (the schema's and the server's), for text that reaches the service without the contract's
 * validator: the recipient page's form. Why `value` breaks them (the rule, in the table's words), or undefined.
 */
export function longTextViolation(value: string): string | undefined {
  if (new RegExp(CONTROL_CHARACTERS.source).test(value)) return ruleMessages.controlCharactersButLineBreaks;
  if (UNPAIRED_SURROGATE.test(value)) return ruleMessages.unpairedSurrogate;
  if ([...value].length > LONG_TEXT_MAX) return boundMessages.atMostCharacters(LONG_TEXT_MAX);
  return undefined;
}

/** Why `value` breaks the rest of `schema`'s rules (the rule, in the table's words), or undefined when it keeps them. */
export function textViolation(schema: TextSchema, value: string): string | undefined {
  if (UNPAIRED_SURROGATE.test(value)) return ruleMessages.unpairedSurrogate;
  const rule: { trimmed?: { min: number; max: number } } = textRules[schema];
  if (!rule.trimmed) return undefined;
  // String.prototype.trim() trims exactly Unicode white space (and the line terminators, refused already).
  const length = [...value.trim()].length;
  if (length < rule.trimmed.min) return ruleMessages.blank;
  if (length > rule.trimmed.max) return boundMessages.atMostCharacters(rule.trimmed.max);
  return undefined;
}
