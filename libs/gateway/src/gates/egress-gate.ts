import type { Denial, EgressSettings, SettingsStore } from '@toolgate/contracts';
import { toolOf, type Call, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import { hostOfUrl, normalizeEgressHost } from '../egress/egress-host.js';

/** What the egress gate reads: the tenant's saved settings (read only), else the boot ones. */
export interface EgressNeeds {
  readonly settings: Pick<SettingsStore, 'getEgress'>;
  readonly bootEgress: EgressSettings;
}

/**
 * Gate 8: every host the call will reach (the manifest's fixed hosts and the host of its URL
 * argument) passes the tenant's egress settings, or the boot configuration when the tenant saved
 * none. Off by default; enabled with an empty list denies everything; `allowAny` passes any host
 * (the network guard still refuses private addresses). The passed hosts are what the call's
 * HTTP client will be limited to.
 */
export function egressGate({ settings, bootEgress }: EgressNeeds): CallGate {
  return {
    name: 'egress',
    check(call) {
      const manifest = toolOf(call).manifest;
      const networked = manifest.permissions.some((p) => p.type === 'network');
      // A tool that reaches nothing needs no settings read: it stays on the synchronous path.
      if (manifest.egress === undefined && !networked) return undefined;
      const hosts = new Set<string>(manifest.egress?.hosts ?? []);
      const urlArg = manifest.egress?.urlArg;
      if (urlArg !== undefined && call.args[urlArg] !== undefined) {
        const value = call.args[urlArg];
        const parsed = typeof value === 'string' ? hostOfUrl(value) : { problem: 'is not a string' };
        if ('problem' in parsed) {
          return deny('egress', 'INVALID_INPUT', `The egress gate cannot check argument '${urlArg}': it ${parsed.problem}.`, `Pass an absolute http(s) URL in '${urlArg}', without user:password@.`);
        }
        hosts.add(parsed.host);
      }
      if (hosts.size === 0 && !networked) return undefined;
      return settings.getEgress(call.principal.tenant).then((saved) => decide(call, hosts, saved ?? bootEgress));
    },
  };
}

function decide(call: Call, hosts: Set<string>, settings: EgressSettings): Denial | undefined {
  const manifest = toolOf(call).manifest;
  const first = hosts.values().next().value;
  if (!settings.enabled) {
    if (hosts.size === 0) {
      call.egress = { hosts, allowAny: false };
      return undefined;
    }
    return deny(
      'egress',
      'EGRESS_BLOCKED',
      `Network egress is off for tenant '${call.principal.tenant}', so '${manifest.name}' cannot reach '${first}'.`,
      `An operator can enable egress and allow '${first}' with settings.egress.allow {"host": "${first}"} (POST /api/v1/settings/egress/allow).`,
      { host: first ?? null },
    );
  }
  if (settings.allowAny) {
    call.egress = { hosts, allowAny: true };
    return undefined;
  }
  const allowed = new Set(settings.hosts.map(normalised));
  for (const host of hosts) {
    if (!allowed.has(host)) {
      return deny(
        'egress',
        'EGRESS_BLOCKED',
        `Egress to '${host}' is not allowed for tenant '${call.principal.tenant}'${allowed.size === 0 ? ' (its allowlist is empty)' : ''}.`,
        `An operator can allow it with settings.egress.allow {"host": "${host}"} (POST /api/v1/settings/egress/allow).`,
        { host },
      );
    }
  }
  call.egress = { hosts, allowAny: false };
  return undefined;
}

/** Saved hosts should already be normal; a stray malformed entry simply matches nothing. */
function normalised(host: string): string {
  try {
    return normalizeEgressHost(host);
  } catch {
    return '';
  }
}
