export { startPostgres, createTestDatabase, type PostgresServer, type TestDatabase } from './postgres/postgres-fixture.js';
