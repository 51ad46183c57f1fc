import type { EgressSettings } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { normaliseEgress, withHost } from './egress-settings.js';

describe('normaliseEgress', () => {
  it('keeps only the port fields and lists each host once, in first-seen order', () => {
    const input = { enabled: true, allowAny: false, hosts: ['b.example', 'a.example', 'b.example'], extra: 'dropped' } as EgressSettings;
    const saved = normaliseEgress(input);
    expect(saved).toEqual({ enabled: true, allowAny: false, hosts: ['b.example', 'a.example'] });
    expect(Object.keys(saved)).toEqual(['enabled', 'allowAny', 'hosts']);
    expect(saved.hosts).not.toBe(input.hosts);
  });

  it.each([
    [{ enabled: 'yes', allowAny: false, hosts: [] }, 'egress enabled must be a boolean'],
    [{ enabled: true, allowAny: 1, hosts: [] }, 'egress allowAny must be a boolean'],
    [{ enabled: true, allowAny: false, hosts: 'a.example' }, 'egress hosts must be an array of strings'],
    [{ enabled: true, allowAny: false, hosts: ['a.example', 5] }, 'egress hosts[1] must be a string'],
    [{ enabled: true, allowAny: false, hosts: ['a\u0000.example'] }, 'egress hosts[0] must be well-formed Unicode text'],
  ])('refuses %j with TypeError', (settings, message) => {
    expect(() => normaliseEgress(settings as unknown as EgressSettings)).toThrow(TypeError);
    expect(() => normaliseEgress(settings as unknown as EgressSettings)).toThrow(message);
  });
});

describe('withHost', () => {
  it('appends a new host without changing the given list', () => {
    const hosts = ['a.example'];
    expect(withHost(hosts, 'b.example')).toEqual(['a.example', 'b.example']);
    expect(hosts).toEqual(['a.example']);
  });

  it('lists a host that is already there once', () => {
    const hosts = ['a.example', 'b.example'];
    expect(withHost(hosts, 'a.example')).toEqual(['a.example', 'b.example']);
    expect(withHost(withHost([], 'c.example'), 'c.example')).toEqual(['c.example']);
  });
});
