/**
 * Requests, by concern: how one is presented (present.ts), created (create.ts), listed (list.ts), read (read.ts),
 * moved through its states (transitions.ts) and resent (resend.ts). The statements are the database package's
 * (prisma/src/statements/requests.ts).
 */
export * from './create';
export * from './list';
export * from './present';
export * from './read';
export * from './resend';
export * from './transitions';
