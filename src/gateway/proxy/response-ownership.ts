import type { FastifyBaseLogger } from 'fastify';
import type { Storage } from '../../storage/data-source';
import { errorCodeOf } from '../../storage/storage-errors';

/** Longest a healthy answer waits for its owner record (a healthy database writes it in milliseconds). */
export const RECORD_MAX_WAIT_MS = 1000;

/**
 * Which organization created each stored response of the Responses API (table `response_owners`).
 * All tenants share the gateway's provider credential, so their stored responses live in one provider
 * account and the provider would serve any of them to anyone who knows its id: the gateway answers a
 * read, a delete or a `previous_response_id` of a response not recorded for the caller's organization
 * exactly as an unknown id (404), without asking the provider. The tenant is the organization: every
 * project of the organization that created a response may read, continue and delete it.
 */
export class ResponseOwnership {
  /** `maxWaitMs`: how long `record` holds the answer for a slow write (a stalled database) before letting it go. */
  constructor(
    private readonly storage: Storage,
    private readonly maxWaitMs = RECORD_MAX_WAIT_MS,
  ) {}

  /**
   * Records that `organizationId` (through `projectId`) created `responseId`. Never throws: a failed
   * write is logged (the request it belongs to succeeds; the response is then unreadable through the
   * gateway, which fails closed). An id already recorded keeps its owner (ON CONFLICT DO NOTHING).
   * Settles when the row is written, or after `maxWaitMs` (the write goes on; the caller's answer is
   * not held longer by a stalled database).
   */
  record(responseId: string, owner: { organizationId: string; projectId: string }, log: FastifyBaseLogger): Promise<void> {
    const write = this.write(responseId, owner, log);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log.warn({ responseId, waitedMs: this.maxWaitMs }, 'recording the owner of a stored response is slow: answer released before it was written');
        resolve();
      }, this.maxWaitMs);
      timer.unref();
    });
    return Promise.race([write, waited]).finally(() => clearTimeout(timer));
  }

  private async write(responseId: string, owner: { organizationId: string; projectId: string }, log: FastifyBaseLogger): Promise<void> {
    try {
      await this.storage.query(
        'INSERT INTO response_owners (response_id, organization_id, project_id) VALUES ($1, $2, $3) ON CONFLICT (response_id) DO NOTHING',
        [responseId, owner.organizationId, owner.projectId],
      );
    } catch (err) {
      // The SQLSTATE or error code only: the message can quote row data.
      log.error({ errorCode: errorCodeOf(err), responseId }, 'could not record the owner of a stored response: it cannot be read back through the gateway');
    }
  }

  /** The response was created by this organization (a database failure throws: 503 storage_unavailable). */
  async ownedBy(responseId: string, organizationId: string): Promise<boolean> {
    const rows = await this.storage.query('SELECT 1 FROM response_owners WHERE response_id = $1 AND organization_id = $2', [responseId, organizationId]);
    return rows.length > 0;
  }

  /**
   * The provider deleted the response: its record goes too. Never throws (the deletion happened; a
   * record left behind only names a response the provider no longer has), a failure is logged.
   */
  async forget(responseId: string, organizationId: string, log: FastifyBaseLogger): Promise<void> {
    try {
      await this.storage.query('DELETE FROM response_owners WHERE response_id = $1 AND organization_id = $2', [responseId, organizationId]);
    } catch (err) {
      log.warn({ errorCode: errorCodeOf(err), responseId }, 'could not forget the owner of a deleted response');
    }
  }
}
