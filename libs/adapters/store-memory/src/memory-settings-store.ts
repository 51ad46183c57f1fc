import type { EgressSettings, SettingsStore } from '@toolgate/contracts';
import { requireText } from './text-rules.js';

/** Per-tenant egress settings in a map. */
export class MemorySettingsStore implements SettingsStore {
  readonly #egress = new Map<string, EgressSettings>();

  async getEgress(tenant: string): Promise<EgressSettings | undefined> {
    const saved = this.#egress.get(tenant);
    return saved ? copy(saved) : undefined;
  }

  async setEgress(tenant: string, settings: EgressSettings): Promise<EgressSettings> {
    const saved = normalise(settings);
    this.#egress.set(requireText('tenant', tenant), saved);
    return copy(saved);
  }

  async allowEgressHost(tenant: string, host: string, base: EgressSettings): Promise<EgressSettings> {
    requireText('host', host);
    // No await between the read and the write: the read-modify-write is atomic.
    const start = this.#egress.get(tenant) ?? normalise(base);
    const saved: EgressSettings = {
      enabled: true,
      allowAny: start.allowAny,
      hosts: start.hosts.includes(host) ? start.hosts : [...start.hosts, host],
    };
    this.#egress.set(requireText('tenant', tenant), saved);
    return copy(saved);
  }
}

/** Only the port's fields, hosts deduplicated in first-seen order. */
function normalise(settings: EgressSettings): EgressSettings {
  if (typeof settings.enabled !== 'boolean') throw new TypeError('egress enabled must be a boolean');
  if (typeof settings.allowAny !== 'boolean') throw new TypeError('egress allowAny must be a boolean');
  if (!Array.isArray(settings.hosts)) throw new TypeError('egress hosts must be an array of strings');
  const hosts = [...new Set(settings.hosts.map((host, i) => requireText(`egress hosts[${i}]`, host)))];
  return { enabled: settings.enabled, allowAny: settings.allowAny, hosts };
}

function copy(settings: EgressSettings): EgressSettings {
  return { enabled: settings.enabled, allowAny: settings.allowAny, hosts: [...settings.hosts] };
}
