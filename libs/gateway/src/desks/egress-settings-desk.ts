import type { EgressSettings, Principal, SettingsStore } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';
import { normalizeEgressHost } from '../egress/egress-host.js';
import { fromStore, requireRole } from './roles.js';

const MAX_HOSTS = 1000;

/** What the settings desk uses: the saved settings, and the boot ones they replace. */
export interface EgressSettingsNeeds {
  readonly settings: Pick<SettingsStore, 'getEgress' | 'setEgress' | 'allowEgressHost'>;
  readonly bootEgress: EgressSettings;
}

/**
 * A tenant's egress settings: what it saved, or the boot configuration when it saved nothing
 * (saved settings replace the boot ones wholesale, they do not merge). Anyone may read their own
 * tenant's; only its operators may change them.
 */
export class EgressSettingsDesk {
  constructor(private readonly needs: EgressSettingsNeeds) {}

  async get(principal: Principal): Promise<EgressSettings> {
    const saved = await fromStore('read the egress settings', () => this.needs.settings.getEgress(principal.tenant));
    return saved ?? this.needs.bootEgress;
  }

  async set(principal: Principal, settings: EgressSettings): Promise<EgressSettings> {
    requireRole(principal, 'operator', 'change egress settings');
    const valid = checkSettings(settings);
    return fromStore('save the egress settings', () => this.needs.settings.setEgress(principal.tenant, valid));
  }

  async allowHost(principal: Principal, host: string): Promise<EgressSettings> {
    requireRole(principal, 'operator', 'change egress settings');
    const normal = normalizeEgressHost(host);
    return fromStore('save the egress settings', () => this.needs.settings.allowEgressHost(principal.tenant, normal, this.needs.bootEgress));
  }
}

function checkSettings(settings: EgressSettings): EgressSettings {
  if (typeof settings !== 'object' || settings === null) throw new GatewayError('INVALID', 'egress settings must be an object');
  if (typeof settings.enabled !== 'boolean') throw new GatewayError('INVALID', 'enabled must be true or false');
  if (typeof settings.allowAny !== 'boolean') throw new GatewayError('INVALID', 'allowAny must be true or false');
  if (!Array.isArray(settings.hosts)) throw new GatewayError('INVALID', 'hosts must be an array of host names');
  if (settings.hosts.length > MAX_HOSTS) throw new GatewayError('INVALID', `at most ${MAX_HOSTS} hosts may be allowed`);
  const hosts = [...new Set(settings.hosts.map((h, i) => withIndex(i, () => normalizeEgressHost(h))))];
  return { enabled: settings.enabled, allowAny: settings.allowAny, hosts };
}

function withIndex<T>(index: number, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof GatewayError) throw new GatewayError('INVALID', `hosts[${index}]: ${error.message}`);
    throw error;
  }
}
