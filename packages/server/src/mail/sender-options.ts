import type { Db } from '@works-api/prisma';
import type { SignUpPolicy } from '@works-api/prisma';
import type { Logger } from '../observability/logger';
import type { MailTransport } from './transport';

/** What a mail sender (sender.ts) is made with. */
export interface MailSenderOptions {
  db: Db;
  logger: Logger;
  transport: MailTransport;
  /** `MAIL_FROM`: the From header of every email. */
  from: string;
  /** `PUBLIC_URL`: where recipients reach this service; links are `<publicUrl>/r/<token>` and `<publicUrl>/console/…`. */
  publicUrl: string;
  /** `REMINDER_BEFORE`: a pending request with a due date gets one reminder this long before it. */
  reminderBeforeMs: number;
  /** `ANSWER_LINK_TTL`: how long the answer link of an email works (the email says until when). */
  answerLinkTtlMs?: number;
  pollIntervalMs?: number;
  /** Emails being sent at once. */
  maxInFlight?: number;
  /** Injectable for tests: the time (what is due, what is reminded) and the retry jitter. */
  clock?: () => Date;
  random?: () => number;
  /** Called with each finished attempt (metrics). */
  onAttempt?: (outcome: 'sent' | 'retry' | 'failed' | 'dropped') => void;
  /** Send (and remind) only these tenants' emails: tests sharing one PostgreSQL database, each with its clock. */
  onlyTenants?: () => readonly string[];
  /** With `onlyTenants`: also the sign-in emails to these addresses (tests that share a database). */
  onlyAddresses?: () => readonly string[];
  /** `SIGNUP`: who a sign-in email goes to besides addresses with an account (invited ones, anyone, no one). */
  signUp?: SignUpPolicy;
}
