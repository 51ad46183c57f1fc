import { readFileSync } from 'node:fs';
import type { ReplayedRequest } from '@toolgate/testing';

// The Tavily answers the tests replay (recorded in fixtures/, or built the way the service builds them),
// shared by the contract run and the provider's own tests.

export const KEY = 'tvly-dev-Zq8s3cr3tK3yValue0123456789';
export const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
export const json = (body: string, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body });

export function sentQuery(request: ReplayedRequest): string | undefined {
  if (request.method !== 'POST' || request.path !== '/search') return undefined;
  if (request.headers.authorization !== `Bearer ${KEY}`) return undefined;
  const body = JSON.parse(request.body) as { query?: unknown };
  return typeof body.query === 'string' ? body.query : undefined;
}
