import { answerRecipientRequest, getRecipientRequest } from '../domain/recipients/recipients';
import type { HandlerMap } from './types';

/** The operations tagged Recipients in openapi/api.yaml: authenticated with the emailed link's answer token. */
export const recipients = {
  getRecipientRequest: async ({ db, recipientToken, limits }) => ({
    status: 200,
    body: { request: await getRecipientRequest(db, recipientToken, limits.answerLinkTtlMs) },
  }),

  answerRecipientRequest: async ({ db, recipientToken, body, limits }) => ({
    status: 200,
    body: { request: await answerRecipientRequest(db, recipientToken, body.answer, limits.answerLinkTtlMs) },
  }),
} satisfies Partial<HandlerMap>;
