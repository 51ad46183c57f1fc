import { describe, expect, it } from 'vitest';
import { approvalPageBase, approvalPageUrl, approvalUrlOf } from './approval-page.js';

describe('approvalPageUrl', () => {
  it('puts the id as one segment below the base, keeping a proxy prefix and dropping trailing slashes', () => {
    expect(approvalPageUrl('http://127.0.0.1:8765', 'a1b2')).toBe('http://127.0.0.1:8765/approvals/a1b2');
    expect(approvalPageUrl('https://gw.example.com/', 'a1b2')).toBe('https://gw.example.com/approvals/a1b2');
    expect(approvalPageUrl('https://gw.example.com/toolgate//', 'a1b2')).toBe('https://gw.example.com/toolgate/approvals/a1b2');
  });

  describe('path traversal and injection through the id', () => {
    it.each([
      ['../../api/v1/audit', 'https://gw.example.com/approvals/..%2F..%2Fapi%2Fv1%2Faudit'],
      ['a/b', 'https://gw.example.com/approvals/a%2Fb'],
      ['a?token=x', 'https://gw.example.com/approvals/a%3Ftoken%3Dx'],
      ['a#frag', 'https://gw.example.com/approvals/a%23frag'],
      ['a\\b', 'https://gw.example.com/approvals/a%5Cb'],
      ['<script>', 'https://gw.example.com/approvals/%3Cscript%3E'],
      ['%2e%2e', 'https://gw.example.com/approvals/%252e%252e'],
      ['\u202Eid', 'https://gw.example.com/approvals/%E2%80%AEid'],
    ])('%j stays inside its segment', (id, url) => {
      const built = approvalPageUrl('https://gw.example.com', id);
      expect(built).toBe(url);
      // What a browser makes of it: still the page, with the id back in one piece.
      const parsed = new URL(built);
      expect(parsed.origin).toBe('https://gw.example.com');
      expect(parsed.pathname.startsWith('/approvals/')).toBe(true);
      expect(parsed.search + parsed.hash).toBe('');
      expect(decodeURIComponent(parsed.pathname.slice('/approvals/'.length))).toBe(id);
    });

    it.each(['', '.', '..'])('refuses %j, which a browser would resolve away as a dot segment', (id) => {
      expect(() => approvalPageUrl('https://gw.example.com', id)).toThrow(/cannot be an approval id in a URL path/);
    });
  });
});

describe('approvalPageBase: TOOLGATE_PUBLIC_URL, else the listen address', () => {
  it('uses the public URL when set, whatever the listen address', () => {
    expect(approvalPageBase({ publicUrl: 'https://gw.example.com/toolgate', bindHost: '0.0.0.0', port: 8765 })).toBe('https://gw.example.com/toolgate');
  });

  it('uses the listen address, with an any-address as the loopback of its family', () => {
    expect(approvalPageBase({ bindHost: '127.0.0.1', port: 8765 })).toBe('http://127.0.0.1:8765');
    expect(approvalPageBase({ bindHost: '10.0.0.5', port: 9000 })).toBe('http://10.0.0.5:9000');
    expect(approvalPageBase({ bindHost: '::1', port: 9000 })).toBe('http://[::1]:9000');
    expect(approvalPageBase({ bindHost: '0.0.0.0', port: 9000 })).toBe('http://127.0.0.1:9000');
    expect(approvalPageBase({ bindHost: '::', port: 9000 })).toBe('http://[::1]:9000');
    expect(approvalPageBase({ bindHost: 'Toolgate.LAN', port: 9000 })).toBe('http://toolgate.lan:9000');
  });

  it('approvalUrlOf reads the port the server listens on when asked, else the configured one', () => {
    let address: { port: number } | null = null;
    const url = approvalUrlOf({ host: '127.0.0.1', port: 0 }, () => ({ address: () => address as never }));
    expect(url('x1')).toBe('http://127.0.0.1:0/approvals/x1');
    address = { port: 41234 };
    expect(url('x1')).toBe('http://127.0.0.1:41234/approvals/x1');
    expect(approvalUrlOf({ host: '::', port: 8765 }, () => undefined)('x1')).toBe('http://[::1]:8765/approvals/x1');
    expect(approvalUrlOf({ host: '0.0.0.0', port: 0, publicUrl: 'https://gw.example.com/' }, () => ({ address: () => address as never }))('x1')).toBe('https://gw.example.com/approvals/x1');
  });
});
