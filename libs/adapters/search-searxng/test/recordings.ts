import { readFileSync } from 'node:fs';

// The SearXNG answers the tests replay (recorded in fixtures/, or built the way the service builds them),
// shared by the contract run and the provider's own tests.

export const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
export const json = (body: string, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body });
