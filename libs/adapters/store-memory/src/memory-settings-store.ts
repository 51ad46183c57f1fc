import type { EgressSettings, SettingsStore } from '@toolgate/contracts';
import { normaliseEgress, requireText, withHost } from '@toolgate/adapter-kit-store';

/** Per-tenant egress settings in a map. */
export class MemorySettingsStore implements SettingsStore {
  readonly #egress = new Map<string, EgressSettings>();

  async getEgress(tenant: string): Promise<EgressSettings | undefined> {
    const saved = this.#egress.get(tenant);
    return saved ? copy(saved) : undefined;
  }

  async setEgress(tenant: string, settings: EgressSettings): Promise<EgressSettings> {
    const saved = normaliseEgress(settings);
    this.#egress.set(requireText('tenant', tenant), saved);
    return copy(saved);
  }

  async allowEgressHost(tenant: string, host: string, base: EgressSettings): Promise<EgressSettings> {
    requireText('host', host);
    // No await between the read and the write: the read-modify-write is atomic.
    const start = this.#egress.get(tenant) ?? normaliseEgress(base);
    const saved: EgressSettings = { enabled: true, allowAny: start.allowAny, hosts: withHost(start.hosts, host) };
    this.#egress.set(requireText('tenant', tenant), saved);
    return copy(saved);
  }
}

function copy(settings: EgressSettings): EgressSettings {
  return { enabled: settings.enabled, allowAny: settings.allowAny, hosts: [...settings.hosts] };
}
