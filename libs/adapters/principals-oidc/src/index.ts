export { OidcPrincipalDirectory, type OidcDirectoryOptions, type PrincipalPolicy } from './oidc-principal-directory.js';
export { IssuerUnavailableError, JwksCache, type JwksCacheOptions } from './jwks-cache.js';
