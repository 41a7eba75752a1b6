import 'reflect-metadata';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './shared/config';
import { createLogger, type Logger } from './shared/logger';
import { ALL_SERVICES, processLogName, startServices, type RunningServices, type ServiceName } from './services';
import { startIdleReclaim } from './shared/idle-reclaim';
import { openStorage, storageOptions } from './storage/data-source';
import { provisionOrganization } from './storage/provision';
import { prepareStorage, type BootstrapOutcome } from './storage/startup';

/**
 * The only module that reads process.env, ports and signals.
 *
 *   node dist/main.js [all]            detection + gateway + sensor in one process (npm start)
 *   node dist/main.js detection        the gRPC detection service alone
 *   node dist/main.js gateway          the gateway alone (dials DETECTION_ADDRESS)
 *   node dist/main.js sensor           the sensor alone (dials DETECTION_ADDRESS)
 *   node dist/main.js migrate          apply migrations (and bootstrap an empty database), then exit
 *   node dist/main.js create-org --name "Acme" [--project "Acme app"] [--environment production]
 */

/** Longest a log line waits in the stdout buffer. */
const LOG_FLUSH_MS = 200;

const USAGE = `usage: node dist/main.js [all|detection|gateway|sensor|migrate|create-org --name NAME [--project NAME] [--environment production|staging|development]]`;

const HELP = `LLM content-security gateway

usage: npm start                 (= node dist/main.js all)
       node dist/main.js [command] [options]

commands:
  all          detection + gateway + sensor in one process (default; what npm start runs)
  detection    the gRPC detection service alone
  gateway      the gateway alone (REST proxy, management, GraphQL; dials DETECTION_ADDRESS)
  sensor       the sensor alone (dials DETECTION_ADDRESS)
  migrate      apply database migrations (and bootstrap an empty database), then exit
  create-org   --name NAME [--project NAME] [--environment production|staging|development]
               create an organisation with a default policy, a project and its first key, then exit

options:
  -h, --help   print this help and exit

Settings come from the environment (e.g. OPENAI_API_KEY, ANTHROPIC_BASE_URL, PORT, DATA_DIR,
DATABASE_URL, REDIS_URL): .env.example lists every one with its default, docs/configuration.md
explains them. Stop with SIGTERM or Ctrl-C: the services drain and close.
`;

function printBootstrap(outcome: BootstrapOutcome | undefined, out: NodeJS.WritableStream): void {
  if (!outcome) return;
  if (outcome.created) {
    const r = outcome.result;
    out.write(`\nBootstrap: created organization ${r.organizationId}, default policy ${r.policyId}, project ${r.projectId}.\n`);
    if (outcome.keyWasProvided) {
      out.write(`The first project's API key is BOOTSTRAP_API_KEY (prefix ${r.keyPrefix}).\n\n`);
    } else {
      out.write(`First project API key (shown once, store it now): ${r.rawKey}\n\n`);
    }
  } else if (outcome.bootstrapKeyKnown === false) {
    out.write('Note: BOOTSTRAP_API_KEY is ignored: the database was bootstrapped before with another key.\n');
  }
}

async function createOrganization(config: Config, argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { name: { type: 'string' }, project: { type: 'string' }, environment: { type: 'string' } },
    strict: true,
  });
  const name = values.name?.trim();
  if (!name || name.length > 200) throw new Error('--name is required (1 to 200 characters)');
  const environment = values.environment ?? 'production';
  if (!['production', 'staging', 'development'].includes(environment)) {
    throw new Error('--environment must be production, staging or development');
  }
  const storage = await openStorage(storageOptions(config)).catch((err: unknown) => {
    // Typically the running server holds the embedded database: point at the route that works meanwhile.
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\nWhile the server runs, create organizations with POST /v1/organizations and the operator credential (ADMIN_API_KEY).`);
  });
  try {
    await prepareStorage(storage, { bootstrapApiKey: config.BOOTSTRAP_API_KEY });
    const r = await storage.dataSource.transaction((m) =>
      provisionOrganization(m, {
        organizationName: name,
        projectName: values.project?.trim() || `${name} project`,
        environment: environment as 'production' | 'staging' | 'development',
      }),
    );
    process.stdout.write(
      `Created organization ${r.organizationId} with default policy ${r.policyId} and project ${r.projectId}.\n` +
        `API key (shown once, store it now): ${r.rawKey}\n`,
    );
  } finally {
    await storage.close();
  }
}

async function migrate(config: Config): Promise<void> {
  const storage = await openStorage(storageOptions(config));
  try {
    printBootstrap(await prepareStorage(storage, { bootstrapApiKey: config.BOOTSTRAP_API_KEY }), process.stdout);
    process.stdout.write('Migrations applied.\n');
  } finally {
    await storage.close();
  }
}

function installSignalHandlers(running: RunningServices, logger: Logger): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function serve(config: Config, env: NodeJS.ProcessEnv, services: readonly ServiceName[], detectionThread = false): Promise<void> {
  // Buffered asynchronous stdout: lines go out in writes of 8 KiB or every LOG_FLUSH_MS, not one
  // write per line on the request path. pino flushes what is pending when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 8192 });
  setInterval(() => {
    try {
      destination.flush();
    } catch {
      /* destroyed at exit */
    }
  }, LOG_FLUSH_MS).unref();
  const root = createLogger({ level: config.LOG_LEVEL, destination });
  // The process's own lines; startServices names each service's lines itself (gateway, sensor, detection).
  const logger = root.child({ name: processLogName(services) });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  const running = await startServices({ config, services, logger: root, detectionThread, env });
  // The main thread's heap after a burst (the detection thread runs its own: detection-worker.ts).
  if (config.MEMORY_RECLAIM_IDLE_MS > 0) startIdleReclaim({ idleMs: config.MEMORY_RECLAIM_IDLE_MS });
  installSignalHandlers(running, logger);
  printBootstrap(running.bootstrap, process.stdout);
  const where = [
    running.gatewayUrl && `gateway ${running.gatewayUrl}`,
    running.sensorUrl && `sensor ${running.sensorUrl}`,
    running.detectionAddress && `detection grpc://${running.detectionAddress}`,
  ].filter(Boolean);
  // Metrics on a line of their own: the Ready line keeps its shape for the scripts that read it.
  const metrics = running.metricsUrl ?? running.detectionMetricsUrl;
  if (metrics) process.stdout.write(`Metrics: ${metrics}\n`);
  process.stdout.write(`Ready: ${where.join(', ')}\n`);
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  // `npm start -- --help` arrives as ["all", "--help"].
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const [command = 'all', ...rest] = argv;
  const config = loadConfig(env);
  switch (command) {
    case 'all':
      // Detection gets a worker thread (its own core) unless DETECTION_THREAD=false.
      return serve(config, env, ALL_SERVICES, config.DETECTION_THREAD);
    case 'detection':
    case 'gateway':
    case 'sensor':
      return serve(config, env, [command]);
    case 'migrate':
      return migrate(config);
    case 'create-org':
      return createOrganization(config, rest);
    default:
      throw new Error(`unknown command "${command}"\n${USAGE}`);
  }
}

/** The command line: {@link main}, and exit 1 with a clear message when start-up fails. */
export function run(argv: string[], env: NodeJS.ProcessEnv): void {
  main(argv, env).catch((err: unknown) => {
    const message = err instanceof ConfigError ? err.message : `Start-up failed: ${err instanceof Error ? err.message : String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}

// `node dist/main.js …`; `npm start` (scripts/start.js) calls run() after checking dist/ is current.
if (require.main === module) run(process.argv.slice(2), process.env);
