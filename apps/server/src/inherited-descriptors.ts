import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` shows it in the octal `flags:` line (Linux). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes every descriptor above stderr that this process inherited without close-on-exec.
 *
 * Node and the libraries the server uses open their own descriptors with `O_CLOEXEC`, but a
 * launcher (a wrapper script, a supervisor's pipe, socket activation) may hand the server open
 * files that every child would inherit: bubblewrap does not close them, so a sandboxed `bash`
 * could read a file through `/proc/self/fd/N` that its mount namespace hides. Closing them at
 * start, before any child exists, means no tool process can reach them. Returns the closed
 * descriptors, for the start-up log. Outside Linux (no `/proc/self/fdinfo`) it does nothing.
 */
export function closeInheritedDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let flags: number;
    try {
      const match = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!match) continue;
      flags = parseInt(match[1]!, 8);
    } catch {
      // The descriptor of the directory listing itself is gone by now; nothing to do.
      continue;
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Already closed between the listing and here.
    }
  }
  return closed;
}
