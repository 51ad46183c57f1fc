import { toolOf, type Call } from '../call.js';
import { argsDigest, payloadDigest } from './canonical-json.js';

/** Digest of the accepted (repaired) arguments, memoised: several audit events carry it. */
const digests = new WeakMap<Call, string>();
export function argsDigestOf(call: Call): string | undefined {
  if (!call.inputAccepted) return undefined;
  let digest = digests.get(call);
  if (digest === undefined) {
    digest = argsDigest(call.args);
    digests.set(call, digest);
  }
  return digest;
}

/** The digest an approval of this call must carry (over the repaired arguments). */
export function payloadDigestOf(call: Call): string {
  const manifest = toolOf(call).manifest;
  return payloadDigest({
    tenant: call.principal.tenant,
    principal: call.principal.id,
    tool: manifest.name,
    version: manifest.version,
    args: call.args,
  });
}
