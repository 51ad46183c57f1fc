import { SEARCH_FAILURE_REASONS as REASONS, ToolError, type HttpResponse } from '@toolgate/contracts';

/** A JSON answer that carries a `results` list, and the rest of it for provider-specific fields. */
export interface JsonAnswer {
  readonly results: readonly unknown[];
  readonly answer: Readonly<Record<string, unknown>>;
}

/**
 * Throws the `ToolError` for any HTTP status but 200. `specific` gives a provider's own error for
 * the statuses it knows better (a captcha answered with 202, a disabled API with 403, a plan
 * limit with 432) and undefined for the rest, which map the same for every provider: 429 rate
 * limited, 5xx unavailable (both worth a retry), 401/403 refused, anything else (redirects
 * included: they are not followed) a bad response.
 */
export function checkStatus(status: number, provider: string, specific?: (status: number) => ToolError | undefined): void {
  if (status === 200) return;
  throw specific?.(status) ?? commonStatusError(status, provider);
}

function commonStatusError(status: number, provider: string): ToolError {
  if (status === 429) return new ToolError(`${provider} rate-limited this server; try again later`, REASONS.rateLimited);
  if (status >= 500) return new ToolError(`${provider} is unavailable (HTTP ${status}); try again later`, REASONS.unavailable);
  if (status === 401 || status === 403) return new ToolError(`${provider} refused the search (HTTP ${status})`, REASONS.refused);
  return badResponse(provider, `unexpected HTTP ${status}`);
}

/** `<provider> answered with <what>`, reason `PROVIDER_BAD_RESPONSE`: the answer is unusable. */
export function badResponse(provider: string, what: string): ToolError {
  return new ToolError(`${provider} answered with ${what}`, REASONS.badResponse);
}

/** The service answered and found nothing: reason `NO_RESULTS`, naming the query. */
export function noResults(provider: string, query: string): ToolError {
  return new ToolError(`${provider} found no results for '${query}'`, REASONS.noResults);
}

/**
 * Parses a JSON API's answer whose results are in a top-level `results` list. A truncated body
 * (larger than the request's byte cap), a body that is not JSON, and JSON without that list are
 * each a {@link badResponse}: half an answer is never parsed as a whole one.
 */
export function readJsonAnswer(response: HttpResponse, provider: string): JsonAnswer {
  if (response.truncated) throw badResponse(provider, 'an answer larger than the limit');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(response.body).toString('utf8'));
  } catch {
    throw badResponse(provider, 'a body that is not JSON');
  }
  const answer = json as Record<string, unknown> | null;
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.results)) {
    throw badResponse(provider, 'JSON without a results list');
  }
  return { results: answer.results as unknown[], answer };
}
