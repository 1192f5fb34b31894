import { z } from 'zod';
import { DURATION_UNITS_MS, durationBetween, wholeNumber } from './config-values';

/** The settings of console sign-in and sessions (config.ts reads them with the rest; docs/configuration.md). */

const SIGN_UP_POLICIES = ['invite', 'open', 'closed'] as const;
export type SignUpPolicy = (typeof SIGN_UP_POLICIES)[number];

/** The variables, as config.ts's `environment` checks them. */
export const sessionVariables = {
  SIGNUP: z.enum(SIGN_UP_POLICIES, `must be one of ${SIGN_UP_POLICIES.join(', ')}`).optional(),
  SESSION_IDLE_TIMEOUT: durationBetween('5m', '30d').default(24 * DURATION_UNITS_MS.h),
  SESSION_LIFETIME: durationBetween('1h', '365d').default(30 * DURATION_UNITS_MS.d),
  SIGN_IN_EMAILS_PER_ADDRESS_PER_HOUR: wholeNumber(1, 1000).default(5),
  SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR: wholeNumber(0, 1_000_000).default(60),
};

type SessionVariables = z.output<z.ZodObject<typeof sessionVariables>> & { DEV_MAILBOX?: unknown };

/** How people sign in and stay signed in (console sessions). */
export interface SessionSettings {
  /** SIGNUP: who gets an account by signing in (besides the users an operator created). */
  signUp: SignUpPolicy;
  /** Why `signUp` is what it is when SIGNUP was not set (for the start-up line). */
  signUpDefault?: string;
  /** SESSION_IDLE_TIMEOUT: a session unused this long no longer authenticates. */
  idleTimeoutMs: number;
  /** SESSION_LIFETIME: a session this old no longer authenticates, however used. */
  lifetimeMs: number;
  /** Sessions a user keeps (the oldest end as new ones start). */
  maxPerUser: number;
  /** SIGN_IN_EMAILS_PER_ADDRESS_PER_HOUR: sign-in emails to one address (compared in canonical form) per hour. */
  emailsPerAddressPerHour: number;
  /** SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR: sign-in requests (emails and codes) per client address per hour; 0: off. */
  requestsPerClientPerHour: number;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  signUp: 'invite',
  idleTimeoutMs: 24 * DURATION_UNITS_MS.h,
  lifetimeMs: 30 * DURATION_UNITS_MS.d,
  maxPerUser: 50,
  emailsPerAddressPerHour: 5,
  requestsPerClientPerHour: 60,
};

/** The settings from the checked variables; `devMailbox`: whether the dev mailbox is on (config.ts decides). */
export function sessionSettings(vars: SessionVariables, devMailbox: boolean): SessionSettings {
  return {
    // A developer's machine (the dev mailbox on by default: embedded database, loopback, no SMTP) lets anyone who
    // reads the server's log in: the README's first command then leads straight into the console.
    signUp: vars.SIGNUP ?? (devMailbox && vars.DEV_MAILBOX === undefined ? 'open' : 'invite'),
    ...(vars.SIGNUP === undefined && {
      signUpDefault:
        devMailbox && vars.DEV_MAILBOX === undefined
          ? 'open by default with the dev mailbox on (a local machine: sign-in links are printed in this log)'
          : 'invite by default',
    }),
    idleTimeoutMs: vars.SESSION_IDLE_TIMEOUT,
    lifetimeMs: vars.SESSION_LIFETIME,
    maxPerUser: DEFAULT_SESSION_SETTINGS.maxPerUser,
    emailsPerAddressPerHour: vars.SIGN_IN_EMAILS_PER_ADDRESS_PER_HOUR,
    requestsPerClientPerHour: vars.SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR,
  };
}

/** What the start-up line says of them. */
export const describeSessions = (sessions: SessionSettings) => ({
  signUp: sessions.signUp + (sessions.signUpDefault ? ` (${sessions.signUpDefault})` : ''),
  idleTimeout: `${sessions.idleTimeoutMs / 1000} s`,
  lifetime: `${sessions.lifetimeMs / 1000} s`,
});
