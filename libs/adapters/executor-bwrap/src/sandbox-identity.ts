import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Host files that become the sandbox's `/etc/passwd` and `/etc/group`. */
export interface IdentityFiles {
  readonly passwd: string;
  readonly group: string;
}

const written = new Map<string, IdentityFiles>();

/**
 * A two-line `/etc/passwd` and `/etc/group` naming the sandbox user, written once per process
 * and identity. Programs that look up their own uid (git, ssh, ps) get an answer; nothing of the
 * host's user database is visible.
 */
export function identityFiles(uid: number, gid: number): IdentityFiles {
  const key = `${uid}:${gid}`;
  const existing = written.get(key);
  // A long-running server may see its temporary directory cleaned (tmpfiles); write them again then.
  if (existing && existsSync(existing.passwd) && existsSync(existing.group)) return existing;
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bwrap-etc-'));
  // Sandboxes die with this process (--die-with-parent), so nothing needs the files after it.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const files = { passwd: join(dir, 'passwd'), group: join(dir, 'group') };
  writeFileSync(
    files.passwd,
    `sandbox:x:${uid}:${gid}:toolgate sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    { mode: 0o644 },
  );
  writeFileSync(files.group, `sandbox:x:${gid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
  written.set(key, files);
  return files;
}
