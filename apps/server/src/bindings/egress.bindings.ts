import { GuardedHttpClient } from '@toolgate/adapter-net-guard';
import { HttpClientToken, token, type Token } from '@toolgate/contracts';
import { StartupError } from '../startup-error.js';
import { ConfigToken } from '../tokens.js';
import type { Binder } from './binder.js';

const GuardedHttpClientToken: Token<GuardedHttpClient> = token('GuardedHttpClient');

/**
 * Port `HttpClient`: every tool's network access. One adapter, the guarded client, which
 * classifies every address itself; there is deliberately no setting that picks an unguarded one.
 */
export function bindEgress(binder: Binder): void {
  binder
    .resolved(GuardedHttpClientToken, { config: ConfigToken }, ({ config }) => {
      try {
        return new GuardedHttpClient({ allowedCidrs: config.egress.allowedCidrs });
      } catch (error) {
        throw new StartupError(`TOOLGATE_EGRESS_ALLOWED_CIDRS: ${(error as Error).message}`);
      }
    })
    .onDeactivation((http) => http.close());
  binder.resolved(HttpClientToken, { http: GuardedHttpClientToken }, ({ http }) => http);
}
