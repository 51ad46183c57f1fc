import { token, type Token } from './token.js';

/** Which hosts a tenant's tool calls may reach. */
export interface EgressSettings {
  /** False: no tool call of the tenant reaches the network, whatever else is set. */
  readonly enabled: boolean;
  /** Any public host (private ranges stay blocked by the network guard). */
  readonly allowAny: boolean;
  /** Bare lowercase host names. Enabled with an empty list denies all. */
  readonly hosts: readonly string[];
}

/** Per-tenant settings, overlaid on the boot configuration. */
export interface SettingsStore {
  /** The tenant's saved egress settings, or undefined when it has none (boot config applies). */
  getEgress(tenant: string): Promise<EgressSettings | undefined>;
  /** Replaces the tenant's egress settings and returns them as stored (hosts deduplicated). */
  setEgress(tenant: string, settings: EgressSettings): Promise<EgressSettings>;
  /**
   * Enables egress and appends `host` atomically, starting from `base` if the tenant has no
   * saved settings. Idempotent.
   */
  allowEgressHost(tenant: string, host: string, base: EgressSettings): Promise<EgressSettings>;
}
/** The settings store `apps/server` binds by `TOOLGATE_STORE` (SQLite or PostgreSQL). */
export const SettingsStoreToken: Token<SettingsStore> = token('SettingsStore');
