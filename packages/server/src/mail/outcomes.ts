import type { Db } from '@works-api/prisma';
import { type ClaimedEmailRow, recordEmailOutcomes } from '@works-api/prisma';

/** An attempt's outcome, as one statement records those of several emails. */
export interface Outcome {
  mail: Pick<ClaimedEmailRow, 'id'>;
  /** `retry`: the email stays queued, due again at `retryAt`. */
  status: 'sent' | 'failed' | 'dropped' | 'retry';
  error: string | null;
  retryAt: Date | null;
  emailsStopped: boolean;
  at: Date;
}

/** Batches the outcomes of the mail sender's attempts: those ready in one turn of the event loop, one statement. */
export class OutcomeRecorder {
  private pending: Array<{ outcome: Outcome; resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly db: Db) {}

  /**
   * Records an outcome with the others that are ready in this turn of the event loop, in one statement (below):
   * no outcome waits for another, only for the end of the turn it is in, so none widens the window in which a
   * killed process leaves a sent email to be sent again. Rejects when that statement failed.
   */
  record(outcome: Outcome): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.write());
      this.pending.push({ outcome, resolve, reject });
    });
  }

  /**
   * One statement for the outcomes of several emails: each email's state (a retry stays queued, due again later),
   * and the `emailDelivery` of each request whose email that was, unless a resend has replaced it meanwhile (it is
   * no longer `queued`): then the request describes the new one. Of two emails of one request recorded together
   * (its email and its reminder), the later one's outcome is the request's.
   */
  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const outcomes = batch.map((entry) => entry.outcome);
    try {
      await recordEmailOutcomes(this.db, {
        mailIds: outcomes.map((o) => o.mail.id),
        statuses: outcomes.map((o) => o.status),
        errors: outcomes.map((o) => o.error),
        retryAts: outcomes.map((o) => o.retryAt?.toISOString() ?? null),
        emailsStopped: outcomes.map((o) => o.emailsStopped),
        ats: outcomes.map((o) => o.at.toISOString()),
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const entry of batch) entry.resolve();
  }
}
