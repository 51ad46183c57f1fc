import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from './sqlite-database.js';
import { migrateSqlite, SqliteSchemaTooNewError, sqliteSchemaVersion, type SqliteMigration } from './sqlite-migrations.js';
import { openSqliteStores } from './sqlite-stores.js';

describe('migrateSqlite', () => {
  let db: Database.Database;
  beforeEach(() => {
    db = openSqliteDatabase(':memory:');
  });
  afterEach(() => db.close());

  const notes: SqliteMigration[] = [
    { version: 1, description: 'notes', up: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT' },
    { version: 2, description: 'note authors', up: "ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT ''" },
  ];
  const tables = () => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

  it('applies each step once and records it per component', () => {
    migrateSqlite(db, 'notes', notes.slice(0, 1));
    expect(sqliteSchemaVersion(db, 'notes')).toBe(1);
    migrateSqlite(db, 'notes', notes);
    migrateSqlite(db, 'notes', notes);
    expect(sqliteSchemaVersion(db, 'notes')).toBe(2);
    expect(db.prepare('SELECT component, version, description FROM schema_migrations ORDER BY version').all()).toEqual([
      { component: 'notes', version: 1, description: 'notes' },
      { component: 'notes', version: 2, description: 'note authors' },
    ]);
    db.prepare("INSERT INTO notes (body, author) VALUES ('x', 'y')").run();
  });

  it('lets another component (e.g. a message bus) keep its own numbering beside the stores', () => {
    migrateSqlite(db, 'notes', notes);
    migrateSqlite(db, 'bus', [{ version: 1, description: 'bus', up: 'CREATE TABLE bus_messages (seq INTEGER PRIMARY KEY) STRICT' }]);
    expect(sqliteSchemaVersion(db, 'notes')).toBe(2);
    expect(sqliteSchemaVersion(db, 'bus')).toBe(1);
    expect(sqliteSchemaVersion(db, 'never-migrated')).toBe(0);
  });

  it('runs a function step for data changes', () => {
    migrateSqlite(db, 'notes', [
      ...notes,
      { version: 3, description: 'seed', up: (d) => void d.prepare("INSERT INTO notes (body) VALUES ('seeded')").run() },
    ]);
    expect(db.prepare('SELECT body FROM notes').all()).toEqual([{ body: 'seeded' }]);
  });

  it('rolls a failing batch back completely', () => {
    const broken: SqliteMigration[] = [...notes, { version: 3, description: 'broken', up: 'CREATE TABLE oops (' }];
    expect(() => migrateSqlite(db, 'notes', broken)).toThrow();
    expect(tables()).not.toContain('notes');
    expect(sqliteSchemaVersion(db, 'notes')).toBe(0);
  });

  it('refuses a database migrated by a newer server', () => {
    migrateSqlite(db, 'notes', notes);
    let caught: unknown;
    try {
      migrateSqlite(db, 'notes', notes.slice(0, 1));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SqliteSchemaTooNewError);
    expect((caught as Error).message).toMatch(/schema version 2 for 'notes', but this server knows only up to 1/);
  });

  it('rejects migrations that are not numbered 1, 2, 3, … and odd component names', () => {
    expect(() => migrateSqlite(db, 'notes', [notes[1] as SqliteMigration])).toThrow(/numbered 1, 2, 3/);
    expect(() => migrateSqlite(db, 'notes', [notes[0] as SqliteMigration, notes[0] as SqliteMigration])).toThrow(/numbered 1, 2, 3/);
    expect(() => migrateSqlite(db, "x'; DROP TABLE y; --", notes)).toThrow(/component/);
  });

  it('records the stores’ own components at version 1', async () => {
    const stores = openSqliteStores(':memory:');
    try {
      const versions = stores.db.prepare('SELECT component, version FROM schema_migrations ORDER BY component').all();
      expect(versions).toEqual([
        { component: 'approvals', version: 1 },
        { component: 'budgets', version: 1 },
        { component: 'pins', version: 1 },
        { component: 'settings', version: 1 },
      ]);
    } finally {
      await stores.close();
    }
  });
});
