export {
  GuardedHttpClient,
  type GuardedHttpClientOptions,
  type Resolver,
  type ResolvedAddress,
} from './guarded-http-client.js';
export {
  classifyAddress,
  describeAddressClass,
  parseCidrList,
  parseCidr,
  RANGE_DESCRIPTIONS,
  type AddressClass,
  type AddressRange,
  type AllowedCidr,
  type EmbeddingForm,
} from './address-policy.js';
