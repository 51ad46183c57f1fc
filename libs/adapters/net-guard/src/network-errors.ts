import { ToolError } from '@toolgate/contracts';

/** Node's codes for a certificate that was refused, told apart from a handshake that failed. */
const TLS_CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Maps a transport failure to a message that names the host and the failure class, nothing internal. */
export function translateNetworkError(err: unknown, host: string): ToolError {
  if (err instanceof ToolError) return err;
  const code = errorCode(err);
  switch (code) {
    case 'ECONNREFUSED':
      return new ToolError(`connection to '${host}' was refused`, 'CONNECTION_REFUSED');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new ToolError(`the connection to '${host}' closed before the response was complete`, 'CONNECTION_CLOSED');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return new ToolError(`'${host}' is unreachable`, 'HOST_UNREACHABLE');
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ToolError(`connecting to '${host}' timed out`, 'TIMEOUT');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new ToolError(`'${host}' stopped responding`, 'TIMEOUT');
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new ToolError(`the response headers from '${host}' are too large`, 'BAD_RESPONSE');
  }
  if (code && TLS_CERTIFICATE_CODES.has(code)) {
    return new ToolError(`the TLS certificate of '${host}' was rejected (${code})`, 'TLS_FAILED');
  }
  if (code && (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code === 'EPROTO')) {
    return new ToolError(`the TLS handshake with '${host}' failed`, 'TLS_FAILED');
  }
  if (code && code.startsWith('HPE_')) {
    return new ToolError(`'${host}' sent a malformed HTTP response`, 'BAD_RESPONSE');
  }
  return new ToolError(`the request to '${host}' failed`, 'NETWORK_ERROR');
}

/** The error code, looking through happy-eyeballs' AggregateError and `cause` wrappers. */
function errorCode(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > 3) return undefined;
  const { code, errors, cause } = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0], depth + 1);
  return errorCode(cause, depth + 1);
}
