// The redaction rules live in contracts so the gateway, tools and both audit sinks apply one set.
export { redactSecrets, REDACTED } from '@toolgate/contracts';
