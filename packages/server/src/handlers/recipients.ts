import { answerRecipientRequest, getRecipientRequest } from '../domain/recipients/recipients';
import type { HandlerMap } from '../http/handler';

/** The operations tagged Recipients in openapi/api.yaml: authenticated with the emailed link's answer token. */
export const recipients = {
  getRecipientRequest: async ({ db, recipientToken }) => ({
    status: 200,
    body: { request: await getRecipientRequest(db, recipientToken) },
  }),

  answerRecipientRequest: async ({ db, recipientToken, body }) => ({
    status: 200,
    body: { request: await answerRecipientRequest(db, recipientToken, body.answer) },
  }),
} satisfies Partial<HandlerMap>;
