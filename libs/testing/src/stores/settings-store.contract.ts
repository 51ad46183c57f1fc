import type { EgressSettings, SettingsStore } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { freshTenant, HOSTILE_STRINGS, useStore, type StoreFactory } from './store-under-test.js';

const OFF: EgressSettings = { enabled: false, allowAny: false, hosts: [] };

/** The behaviour every `SettingsStore` adapter must share. */
export function testSettingsStore(open: StoreFactory<SettingsStore>): void {
  const opened = useStore(open);
  const store = () => opened.current();

  describe('egress get and set', () => {
    it('has nothing saved until a tenant sets something', async () => {
      expect(await store().getEgress(freshTenant())).toBeUndefined();
    });

    it('treats a tenant name no store could hold as having nothing saved', async () => {
      const tenant = `${freshTenant()}-\ufffd`;
      await store().setEgress(tenant, { enabled: true, allowAny: false, hosts: ['a.example'] });
      expect(await store().getEgress(tenant.replace('\ufffd', '\ud800'))).toBeUndefined();
      await expect(store().setEgress(tenant.replace('\ufffd', '\u0000'), OFF)).rejects.toThrow(/tenant must be well-formed Unicode/);
    });

    it('saves a copy with hosts deduplicated in first-seen order, and replaces it on the next set', async () => {
      const tenant = freshTenant();
      const hosts = ['b.example', 'a.example', 'b.example', 'c.example', 'a.example'];
      const input = { enabled: true, allowAny: false, hosts };
      const expected = { enabled: true, allowAny: false, hosts: ['b.example', 'a.example', 'c.example'] };
      expect(await store().setEgress(tenant, input)).toEqual(expected);
      hosts.push('late.example');
      expect(await store().getEgress(tenant)).toEqual(expected);

      const replaced = { enabled: false, allowAny: true, hosts: [] };
      expect(await store().setEgress(tenant, replaced)).toEqual(replaced);
      expect(await store().getEgress(tenant)).toEqual(replaced);
    });

    it('keeps only the port’s fields', async () => {
      const tenant = freshTenant();
      await store().setEgress(tenant, { enabled: true, allowAny: false, hosts: ['x.example'], extra: 'dropped' } as EgressSettings);
      expect(await store().getEgress(tenant)).toEqual({ enabled: true, allowAny: false, hosts: ['x.example'] });
    });

    it('returns copies: editing a returned value changes nothing stored', async () => {
      const tenant = freshTenant();
      const saved = await store().setEgress(tenant, { enabled: true, allowAny: false, hosts: ['a.example'] });
      (saved.hosts as string[]).push('evil.example');
      const read = await store().getEgress(tenant);
      (read?.hosts as string[]).push('evil.example');
      expect((await store().getEgress(tenant))?.hosts).toEqual(['a.example']);
    });

    it('keeps each tenant’s settings apart', async () => {
      const a = freshTenant('a');
      const b = freshTenant('b');
      await store().setEgress(a, { enabled: true, allowAny: true, hosts: ['a.example'] });
      expect(await store().getEgress(b)).toBeUndefined();
      await store().allowEgressHost(b, 'b.example', OFF);
      expect(await store().getEgress(a)).toEqual({ enabled: true, allowAny: true, hosts: ['a.example'] });
      expect(await store().getEgress(b)).toEqual({ enabled: true, allowAny: false, hosts: ['b.example'] });
    });

    it('rejects malformed settings with a message naming the field', async () => {
      const tenant = freshTenant();
      const bad = (settings: unknown) => store().setEgress(tenant, settings as EgressSettings);
      await expect(bad({ enabled: 'yes', allowAny: false, hosts: [] })).rejects.toThrow(/enabled/);
      await expect(bad({ enabled: true, allowAny: 1, hosts: [] })).rejects.toThrow(/allowAny/);
      await expect(bad({ enabled: true, allowAny: false, hosts: 'a.example' })).rejects.toThrow(/hosts/);
      await expect(bad({ enabled: true, allowAny: false, hosts: [42] })).rejects.toThrow(/hosts/);
      await expect(bad({ enabled: true, allowAny: false, hosts: ['nul\u0000host'] })).rejects.toThrow(/well-formed Unicode/);
      expect(await store().getEgress(tenant)).toBeUndefined();
    });
  });

  describe('allowEgressHost', () => {
    it('starts from the base when nothing is saved: enables egress and appends the host', async () => {
      const tenant = freshTenant();
      const base = { enabled: false, allowAny: true, hosts: ['boot.example', 'boot.example'] };
      const result = await store().allowEgressHost(tenant, 'new.example', base);
      expect(result).toEqual({ enabled: true, allowAny: true, hosts: ['boot.example', 'new.example'] });
      expect(await store().getEgress(tenant)).toEqual(result);
      expect(base).toEqual({ enabled: false, allowAny: true, hosts: ['boot.example', 'boot.example'] });
    });

    it('starts from the saved settings, not the base, once the tenant has some', async () => {
      const tenant = freshTenant();
      await store().setEgress(tenant, { enabled: false, allowAny: false, hosts: ['saved.example'] });
      const result = await store().allowEgressHost(tenant, 'new.example', { enabled: true, allowAny: true, hosts: ['boot.example'] });
      expect(result).toEqual({ enabled: true, allowAny: false, hosts: ['saved.example', 'new.example'] });
      expect(await store().getEgress(tenant)).toEqual(result);
    });

    it('is idempotent: allowing a host twice lists it once', async () => {
      const tenant = freshTenant();
      await store().allowEgressHost(tenant, 'a.example', OFF);
      await store().allowEgressHost(tenant, 'b.example', OFF);
      const again = await store().allowEgressHost(tenant, 'a.example', OFF);
      expect(again).toEqual({ enabled: true, allowAny: false, hosts: ['a.example', 'b.example'] });
      expect(await store().getEgress(tenant)).toEqual(again);
    });

    it('re-enables egress for a host already listed while disabled', async () => {
      const tenant = freshTenant();
      await store().setEgress(tenant, { enabled: false, allowAny: false, hosts: ['a.example'] });
      expect(await store().allowEgressHost(tenant, 'a.example', OFF)).toEqual({ enabled: true, allowAny: false, hosts: ['a.example'] });
    });

    it('loses no host when 50 are allowed concurrently, and lists a host allowed concurrently once', async () => {
      const tenant = freshTenant();
      const hosts = Array.from({ length: 50 }, (_, i) => `h${i}.example`);
      await Promise.all(hosts.map((host) => store().allowEgressHost(tenant, host, OFF)));
      const saved = await store().getEgress(tenant);
      expect(saved?.enabled).toBe(true);
      expect([...(saved?.hosts ?? [])].sort()).toEqual([...hosts].sort());

      const other = freshTenant();
      await Promise.all(Array.from({ length: 50 }, () => store().allowEgressHost(other, 'same.example', OFF)));
      expect((await store().getEgress(other))?.hosts).toEqual(['same.example']);
    });

    it('stores SQL-like, quoted and unicode hosts verbatim (the gateway validates host syntax)', async () => {
      const tenant = freshTenant("t'); DROP TABLE egress_settings; --");
      for (const host of HOSTILE_STRINGS) await store().allowEgressHost(tenant, host, OFF);
      expect((await store().getEgress(tenant))?.hosts).toEqual(HOSTILE_STRINGS);
      await expect(store().allowEgressHost(tenant, 'lone\udc00', OFF)).rejects.toThrow(/host must be well-formed Unicode/);
    });

    it('keeps a long host list in order', async () => {
      const tenant = freshTenant();
      const hosts = Array.from({ length: 2000 }, (_, i) => `${'sub'.repeat(20)}-${i}.example`);
      await store().setEgress(tenant, { enabled: true, allowAny: false, hosts });
      expect((await store().getEgress(tenant))?.hosts).toEqual(hosts);
    });
  });
}
