import type { QueryRunner } from 'typeorm';
import { hashApiKey } from '../shared/api-key';
import type { Storage } from './data-source';
import { OrganizationEntity, ProjectEntity } from './entities';
import { provisionOrganization, type ProvisionResult } from './provision';

/** Advisory lock id serialising schema migrations and bootstrap across instances starting at once. */
const STARTUP_LOCK_ID = 7_428_571_730_001;

export interface BootstrapOptions {
  /** BOOTSTRAP_API_KEY: becomes the first project's key when the database is empty. */
  bootstrapApiKey?: string;
}

export type BootstrapOutcome =
  | { created: true; result: ProvisionResult; keyWasProvided: boolean }
  | { created: false; bootstrapKeyKnown: boolean | null };

/**
 * Runs pending migrations, then bootstraps an empty database (first organization, default policy,
 * first project). On PostgreSQL both happen under a session advisory lock, so any number of instances
 * may start at once: one migrates and bootstraps, the others wait and then find the work done.
 * PGlite is single-process (guarded by the data-dir lock), so no advisory lock is needed there.
 */
export async function prepareStorage(storage: Storage, options: BootstrapOptions = {}): Promise<BootstrapOutcome> {
  if (storage.kind === 'pglite') return migrateAndBootstrap(storage, options);
  const lockRunner = storage.dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK_ID]);
    return await migrateAndBootstrap(storage, options);
  } finally {
    await unlockQuietly(lockRunner);
  }
}

async function unlockQuietly(runner: QueryRunner): Promise<void> {
  try {
    await runner.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK_ID]);
  } finally {
    await runner.release();
  }
}

async function migrateAndBootstrap(storage: Storage, options: BootstrapOptions): Promise<BootstrapOutcome> {
  await storage.dataSource.runMigrations({ transaction: 'each' });
  return storage.dataSource.transaction(async (m) => {
    if ((await m.count(OrganizationEntity)) > 0) {
      const known = options.bootstrapApiKey
        ? (await m.count(ProjectEntity, { where: { keyHash: hashApiKey(options.bootstrapApiKey) } })) > 0
        : null;
      return { created: false as const, bootstrapKeyKnown: known };
    }
    const result = await provisionOrganization(m, {
      organizationName: 'Default organization',
      projectName: 'Default project',
      environment: 'development',
      apiKey: options.bootstrapApiKey,
    });
    return { created: true as const, result, keyWasProvided: options.bootstrapApiKey !== undefined };
  });
}
