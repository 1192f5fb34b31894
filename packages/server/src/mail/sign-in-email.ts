import type { Db } from '@works-api/prisma';
import { armSignIn, type SignUpPolicy } from '@works-api/prisma';
import { newSignInSecret, SIGN_IN_TTL_MS, signInLink } from '../domain/sessions/secrets';
import { type RenderedMail, renderSignInMail } from './render';
import type { MailOrigin } from './transport';

/**
 * A sign-in email, as the mail sender sends it: its link's token and code are made now and only their hashes
 * stored (valid SIGN_IN_TTL from this attempt), if the address may sign in (an account, or SIGNUP allows one); null
 * when it may not or the sign-in was used: then nothing is sent, and the person who asked learns nothing they did
 * not know.
 */
export async function renderSignInEmail(
  db: Db,
  signInId: string,
  options: { clock: () => Date; publicUrl: string; signUp: SignUpPolicy },
): Promise<(RenderedMail & { origin: MailOrigin }) | null> {
  const now = options.clock();
  const secret = newSignInSecret();
  const expiresAt = new Date(now.getTime() + SIGN_IN_TTL_MS);
  const armed = await armSignIn(db, {
    id: signInId,
    tokenHash: secret.tokenHash,
    codeHash: secret.codeHash,
    expiresAt,
    now,
    signUp: options.signUp,
  });
  if (!armed) return null;
  const link = signInLink(options.publicUrl, secret.token);
  const rendered = renderSignInMail({
    to: armed.email,
    link,
    code: secret.code,
    expiresAt,
    newAccount: !armed.hasAccount,
  });
  return { ...rendered, origin: { request: null, signInLink: link } };
}
