import { ToolError, type HttpResponse } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { badResponse, checkStatus, noResults, readJsonAnswer } from './provider-answer.js';

const response = (body: string, truncated = false): HttpResponse => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode(body),
  truncated,
  url: 'https://search.example.org/search',
});

function thrown(action: () => unknown): ToolError {
  try {
    action();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected a ToolError');
}

describe('checkStatus', () => {
  it('lets 200 through and nothing else', () => {
    expect(() => checkStatus(200, 'Svc')).not.toThrow();
    for (const status of [201, 204, 301, 302, 304, 400, 404, 418]) {
      const error = thrown(() => checkStatus(status, 'Svc'));
      expect(error.reason, String(status)).toBe('PROVIDER_BAD_RESPONSE');
      expect(error.message).toBe(`Svc answered with unexpected HTTP ${status}`);
    }
  });

  it('maps the statuses every provider shares', () => {
    expect(thrown(() => checkStatus(429, 'Svc'))).toMatchObject({ reason: 'PROVIDER_RATE_LIMITED', message: 'Svc rate-limited this server; try again later' });
    for (const status of [500, 502, 503, 504, 599]) {
      expect(thrown(() => checkStatus(status, 'Svc'))).toMatchObject({
        reason: 'PROVIDER_UNAVAILABLE',
        message: `Svc is unavailable (HTTP ${status}); try again later`,
      });
    }
    for (const status of [401, 403]) {
      expect(thrown(() => checkStatus(status, 'Svc'))).toMatchObject({ reason: 'PROVIDER_REFUSED', message: `Svc refused the search (HTTP ${status})` });
    }
  });

  it("asks the provider first and keeps the shared mapping for what it leaves", () => {
    const captcha = new ToolError('captcha', 'PROVIDER_RATE_LIMITED');
    const specific = (status: number) => (status === 202 || status === 403 ? captcha : undefined);
    expect(thrown(() => checkStatus(202, 'Svc', specific))).toBe(captcha);
    expect(thrown(() => checkStatus(403, 'Svc', specific))).toBe(captcha);
    expect(thrown(() => checkStatus(401, 'Svc', specific)).reason).toBe('PROVIDER_REFUSED');
    expect(() => checkStatus(200, 'Svc', () => captcha)).not.toThrow();
  });
});

describe('badResponse and noResults', () => {
  it('name the provider and the reason', () => {
    expect(badResponse('Svc', 'a page that is not a results page')).toMatchObject({
      reason: 'PROVIDER_BAD_RESPONSE',
      message: 'Svc answered with a page that is not a results page',
    });
    expect(noResults('Svc', 'zxqv')).toMatchObject({ reason: 'NO_RESULTS', message: "Svc found no results for 'zxqv'" });
  });
});

describe('readJsonAnswer', () => {
  it('returns the results list and the rest of the answer', () => {
    const { results, answer } = readJsonAnswer(response('{"results":[{"url":"u"}],"unresponsive_engines":[["google","timeout"]]}'), 'Svc');
    expect(results).toEqual([{ url: 'u' }]);
    expect(answer.unresponsive_engines).toEqual([['google', 'timeout']]);
    expect(readJsonAnswer(response('{"results":[]}'), 'Svc').results).toEqual([]);
  });

  it('refuses a truncated answer even when the part read is valid JSON', () => {
    const error = thrown(() => readJsonAnswer(response('{"results":[]}', true), 'Svc'));
    expect(error).toMatchObject({ reason: 'PROVIDER_BAD_RESPONSE', message: 'Svc answered with an answer larger than the limit' });
  });

  it('refuses bodies that are not JSON or carry no results list', () => {
    for (const body of ['', '<!DOCTYPE html><html></html>', '{"results": ', '\u0000\u0001']) {
      expect(thrown(() => readJsonAnswer(response(body), 'Svc')).message, body).toBe('Svc answered with a body that is not JSON');
    }
    for (const body of ['null', '42', '"results"', '[1, 2]', '{"results": "many"}', '{"answers": []}', '{"results": {"0": 1}}']) {
      expect(thrown(() => readJsonAnswer(response(body), 'Svc')).message, body).toBe('Svc answered with JSON without a results list');
    }
  });
});
