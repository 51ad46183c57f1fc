export {
  httpFetchTool,
  httpFetchManifest,
  describeResponse,
  HTTP_FETCH_REQUEST_HEADERS,
  HTTP_FETCH_TIMEOUT_MS,
  HTTP_FETCH_MAX_BYTES,
  HTTP_FETCH_DEFAULT_MAX_BYTES,
  HTTP_FETCH_DEFAULT_TIMEOUT_MS,
} from './http-fetch.tool.js';
export { decodeBody, parseMediaType, isTextual, type DecodedBody, type MediaType } from './decode-body.js';
