import type { EgressSettings, SettingsStore } from '@toolgate/contracts';
import { isStorableText, normaliseEgress, requireText, withHost } from '@toolgate/adapter-kit-store';
import type { Pool } from 'pg';
import type { PgMigration } from './pg-migrations.js';

/** The schema history of the `settings` component; append, never edit. */
export const PG_SETTINGS_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: 'per-tenant egress settings',
    up: `
      CREATE TABLE egress_settings (
        tenant TEXT PRIMARY KEY,
        enabled BOOLEAN NOT NULL,
        allow_any BOOLEAN NOT NULL,
        hosts TEXT[] NOT NULL
      );
    `,
  },
];

interface EgressRow {
  enabled: boolean;
  allow_any: boolean;
  hosts: string[];
}

/**
 * Per-tenant egress settings in PostgreSQL. `allowEgressHost` is one upsert that appends the
 * host to the stored array inside PostgreSQL, so concurrent allows from any number of server
 * processes lose no host and list none twice.
 */
export class PgSettingsStore implements SettingsStore {
  constructor(private readonly pool: Pool) {}

  async getEgress(tenant: string): Promise<EgressSettings | undefined> {
    if (!isStorableText(tenant)) return undefined;
    const { rows } = await this.pool.query<EgressRow>('SELECT enabled, allow_any, hosts FROM egress_settings WHERE tenant = $1', [tenant]);
    return rows[0] ? toSettings(rows[0]) : undefined;
  }

  async setEgress(tenant: string, settings: EgressSettings): Promise<EgressSettings> {
    const clean = normaliseEgress(settings);
    const { rows } = await this.pool.query<EgressRow>(
      `INSERT INTO egress_settings (tenant, enabled, allow_any, hosts) VALUES ($1, $2, $3, $4::text[])
       ON CONFLICT (tenant) DO UPDATE SET enabled = EXCLUDED.enabled, allow_any = EXCLUDED.allow_any, hosts = EXCLUDED.hosts
       RETURNING enabled, allow_any, hosts`,
      [requireText('tenant', tenant), clean.enabled, clean.allowAny, clean.hosts],
    );
    return toSettings(only(rows));
  }

  async allowEgressHost(tenant: string, host: string, base: EgressSettings): Promise<EgressSettings> {
    requireText('host', host);
    const start = normaliseEgress(base);
    // The insert branch carries base + host (computed here); the update branch appends to what
    // is stored, unless the host is already there.
    const { rows } = await this.pool.query<EgressRow>(
      `INSERT INTO egress_settings AS s (tenant, enabled, allow_any, hosts) VALUES ($1, true, $2, $3::text[])
       ON CONFLICT (tenant) DO UPDATE SET
         enabled = true,
         hosts = CASE WHEN $4::text = ANY (s.hosts) THEN s.hosts ELSE array_append(s.hosts, $4::text) END
       RETURNING enabled, allow_any, hosts`,
      [requireText('tenant', tenant), start.allowAny, withHost(start.hosts, host), host],
    );
    return toSettings(only(rows));
  }
}

function only(rows: EgressRow[]): EgressRow {
  const [row] = rows;
  if (!row) throw new Error('saving the egress settings returned nothing');
  return row;
}

function toSettings(row: EgressRow): EgressSettings {
  return { enabled: row.enabled, allowAny: row.allow_any, hosts: [...row.hosts] };
}
