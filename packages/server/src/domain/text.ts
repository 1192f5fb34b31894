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
} as const satisfies Record<string, { trimmed?: { min: number; max: number } }>;

export type TextSchema = keyof typeof textRules;

export const isTextSchema = (name: string): name is TextSchema => Object.hasOwn(textRules, name);

// In Unicode mode a paired surrogate is read as one astral code point, so only an unpaired one is \p{Cs}.
const UNPAIRED_SURROGATE = /\p{Cs}/u;

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
