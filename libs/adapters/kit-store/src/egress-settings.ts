import type { EgressSettings } from '@toolgate/contracts';
import { requireText } from './text-rules.js';

/**
 * Only the port's fields, hosts deduplicated in first-seen order, so every settings store saves
 * (and returns) the same value for the same input whatever extra properties the caller's object
 * carries.
 */
export function normaliseEgress(settings: EgressSettings): EgressSettings {
  if (typeof settings.enabled !== 'boolean') throw new TypeError('egress enabled must be a boolean');
  if (typeof settings.allowAny !== 'boolean') throw new TypeError('egress allowAny must be a boolean');
  if (!Array.isArray(settings.hosts)) throw new TypeError('egress hosts must be an array of strings');
  const hosts = [...new Set(settings.hosts.map((host, i) => requireText(`egress hosts[${i}]`, host)))];
  return { enabled: settings.enabled, allowAny: settings.allowAny, hosts };
}

/** `hosts` with `host` appended unless it is already listed: allowing a host twice lists it once. */
export function withHost(hosts: readonly string[], host: string): readonly string[] {
  return hosts.includes(host) ? hosts : [...hosts, host];
}
