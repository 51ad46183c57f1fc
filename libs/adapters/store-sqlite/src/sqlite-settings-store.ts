import type { EgressSettings, SettingsStore } from '@toolgate/contracts';
import { isStorableText, normaliseEgress, requireText, withHost } from '@toolgate/adapter-kit-store';
import type Database from 'better-sqlite3';
import { migrateSqlite, type SqliteMigration } from './sqlite-migrations.js';

/** The schema history of the `settings` component; append, never edit. */
export const SETTINGS_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: 'per-tenant egress settings',
    up: `
      CREATE TABLE egress_settings (
        tenant TEXT PRIMARY KEY,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        allow_any INTEGER NOT NULL CHECK (allow_any IN (0, 1)),
        hosts TEXT NOT NULL CHECK (json_type(hosts) = 'array')
      ) STRICT;
    `,
  },
];

interface EgressRow {
  enabled: number;
  allow_any: number;
  hosts: string;
}

/**
 * Per-tenant egress settings in SQLite, hosts as a JSON array. `allowEgressHost` is one upsert
 * that appends the host inside SQLite, so two processes allowing hosts at once lose neither.
 */
export class SqliteSettingsStore implements SettingsStore {
  readonly #get: Database.Statement<[string], EgressRow>;
  readonly #set: Database.Statement<[Record<string, unknown>], EgressRow>;
  readonly #allow: Database.Statement<[Record<string, unknown>], EgressRow>;

  constructor(db: Database.Database) {
    migrateSqlite(db, 'settings', SETTINGS_MIGRATIONS);
    this.#get = db.prepare('SELECT enabled, allow_any, hosts FROM egress_settings WHERE tenant = ?');
    this.#set = db.prepare(`
      INSERT INTO egress_settings (tenant, enabled, allow_any, hosts) VALUES (@tenant, @enabled, @allowAny, @hosts)
      ON CONFLICT (tenant) DO UPDATE SET enabled = excluded.enabled, allow_any = excluded.allow_any, hosts = excluded.hosts
      RETURNING enabled, allow_any, hosts`);
    // The insert branch carries base + host (computed in JS); the update branch appends to what
    // is saved, unless the host is already there.
    this.#allow = db.prepare(`
      INSERT INTO egress_settings (tenant, enabled, allow_any, hosts) VALUES (@tenant, 1, @allowAny, @hosts)
      ON CONFLICT (tenant) DO UPDATE SET
        enabled = 1,
        hosts = CASE
          WHEN EXISTS (SELECT 1 FROM json_each(egress_settings.hosts) WHERE json_each.value = @host) THEN egress_settings.hosts
          ELSE json_insert(egress_settings.hosts, '$[#]', @host)
        END
      RETURNING enabled, allow_any, hosts`);
  }

  async getEgress(tenant: string): Promise<EgressSettings | undefined> {
    if (!isStorableText(tenant)) return undefined;
    const row = this.#get.get(tenant);
    return row ? toSettings(row) : undefined;
  }

  async setEgress(tenant: string, settings: EgressSettings): Promise<EgressSettings> {
    const clean = normaliseEgress(settings);
    const row = this.#set.get({
      tenant: requireText('tenant', tenant),
      enabled: clean.enabled ? 1 : 0,
      allowAny: clean.allowAny ? 1 : 0,
      hosts: JSON.stringify(clean.hosts),
    });
    if (!row) throw new Error('saving the egress settings returned nothing');
    return toSettings(row);
  }

  async allowEgressHost(tenant: string, host: string, base: EgressSettings): Promise<EgressSettings> {
    requireText('host', host);
    const start = normaliseEgress(base);
    const row = this.#allow.get({
      tenant: requireText('tenant', tenant),
      allowAny: start.allowAny ? 1 : 0,
      hosts: JSON.stringify(withHost(start.hosts, host)),
      host,
    });
    if (!row) throw new Error('saving the egress settings returned nothing');
    return toSettings(row);
  }
}

function toSettings(row: EgressRow): EgressSettings {
  return { enabled: row.enabled === 1, allowAny: row.allow_any === 1, hosts: JSON.parse(row.hosts) as string[] };
}
