import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The kernel-enforced caps of one sandboxed call. */
export interface ResourceLimits {
  /** Most processes (and threads) alive at once in the call, bwrap included. */
  readonly maxProcesses: number;
  /** Most memory the call's processes may use together, tmpfs pages (`/tmp`, `/dev/shm`) included. */
  readonly memoryBytes: number;
}

/** How one cap is applied: a cgroup of either version, a per-process rlimit, or not at all. */
export type CapMechanism = 'cgroup v2' | 'cgroup v1' | 'rlimit' | 'none';

/** Where per-call cgroups are made: one parent directory per hierarchy that holds the controllers. */
export interface CgroupLayout {
  readonly version: 1 | 2;
  /** v2: one directory (both controllers); v1: the pids and the memory hierarchy's directories. */
  readonly pidsParent?: string;
  readonly memoryParent?: string;
}

interface Mount {
  readonly root: string;
  readonly point: string;
  readonly fstype: string;
  readonly options: readonly string[];
}

function parseMountinfo(text: string): Mount[] {
  return text
    .split('\n')
    .flatMap((line) => {
      const [left, right] = line.split(' - ');
      if (!left || !right) return [];
      const fields = left.split(' ');
      const [fstype = '', , options = ''] = right.split(' ');
      // mountinfo escapes spaces and such as octal; cgroup mount points rarely have any.
      const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
      return [{ root: unescape(fields[3] ?? ''), point: unescape(fields[4] ?? ''), fstype, options: options.split(',') }];
    });
}

/** The directory of this process's own cgroup in a hierarchy mounted at `mount`, or undefined if it is not visible. */
function ownDirectory(mount: Mount, ownPath: string): string | undefined {
  if (mount.root !== '/' && ownPath !== mount.root && !ownPath.startsWith(`${mount.root}/`)) return undefined;
  const below = mount.root === '/' ? ownPath : ownPath.slice(mount.root.length);
  // No trailing slash, so the hierarchy's own root compares equal to its mount point.
  return join(mount.point, below).replace(/(.)\/+$/, '$1');
}

/**
 * The part of `found` this process can actually use: a trial cgroup with the caps written is made
 * and removed, per v1 hierarchy separately (one may be writable and the other not). Each reason
 * a controller is not used is added to `problems`.
 */
export async function usableLayout(found: CgroupLayout, limits: ResourceLimits, problems: string[]): Promise<CgroupLayout | undefined> {
  const works = async (layout: CgroupLayout, what: string): Promise<boolean> => {
    const trial = await CallCgroup.create(layout, limits).catch((error: NodeJS.ErrnoException) => {
      problems.push(`cannot create a ${what} cgroup with caps (${error.code ?? error.message}; the server must run as root or own a delegated cgroup)`);
      return undefined;
    });
    if (!trial) return false;
    if (await trial.remove()) return true;
    problems.push(`a trial ${what} cgroup could not be removed`);
    return false;
  };
  if (found.version === 2) return (await works(found, 'v2')) ? found : undefined;
  const pidsParent = found.pidsParent && (await works({ version: 1, pidsParent: found.pidsParent }, 'v1 pids')) ? found.pidsParent : undefined;
  const memoryParent = found.memoryParent && (await works({ version: 1, memoryParent: found.memoryParent }, 'v1 memory')) ? found.memoryParent : undefined;
  if (!pidsParent && !memoryParent) return undefined;
  return { version: 1, ...(pidsParent ? { pidsParent } : {}), ...(memoryParent ? { memoryParent } : {}) };
}

/**
 * Finds where this process may make child cgroups with the pids and memory controllers: a v2
 * hierarchy whose own cgroup offers both to its children is preferred; otherwise the v1 `pids`
 * and `memory` hierarchies, each below this process's own cgroup there. Nothing is written.
 * (In v2, below the parent of this process's cgroup when only that offers both controllers.)
 */
export function findCgroupLayout(): CgroupLayout | undefined {
  try {
    return cgroupLayoutFrom(readFileSync('/proc/self/cgroup', 'utf8'), readFileSync('/proc/self/mountinfo', 'utf8'), v2Offers);
  } catch {
    return undefined;
  }
}

/**
 * `findCgroupLayout` from the texts of `/proc/self/cgroup` and `/proc/self/mountinfo`, and a test
 * of whether a v2 directory offers both controllers to its children.
 */
export function cgroupLayoutFrom(table: string, mountinfo: string, offers: (dir: string) => boolean): CgroupLayout | undefined {
  const all = parseMountinfo(mountinfo);
  const own = new Map<string, string>();
  for (const line of table.trim().split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    if (match[1] === '0' && match[2] === '') own.set('', match[3]!);
    for (const controller of match[2]!.split(',')) if (controller) own.set(controller, match[3]!);
  }
  const v2Path = own.get('');
  const v2Mount = all.find((m) => m.fstype === 'cgroup2');
  if (v2Path !== undefined && v2Mount) {
    const dir = ownDirectory(v2Mount, v2Path);
    if (dir && offers(dir)) return { version: 2, pidsParent: dir, memoryParent: dir };
    // v2 lets a cgroup with processes (the gateway's) have no controller-enabled children, but its
    // parent often offers both (systemd slices): the calls' cgroups are then the gateway's siblings.
    const parent = dir && dir !== v2Mount.point ? dirname(dir) : undefined;
    if (parent && offers(parent)) return { version: 2, pidsParent: parent, memoryParent: parent };
  }
  const v1 = (controller: string) => {
    const mount = all.find((m) => m.fstype === 'cgroup' && m.options.includes(controller));
    const path = own.get(controller);
    return mount && path !== undefined ? ownDirectory(mount, path) : undefined;
  };
  const pidsParent = v1('pids');
  const memoryParent = v1('memory');
  if (!pidsParent && !memoryParent) return undefined;
  return { version: 1, ...(pidsParent ? { pidsParent } : {}), ...(memoryParent ? { memoryParent } : {}) };
}

/** Whether children of a v2 cgroup get both controllers (listed in its `cgroup.subtree_control`). */
function v2Offers(dir: string): boolean {
  try {
    const enabled = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
    return enabled.includes('pids') && enabled.includes('memory');
  } catch {
    return false;
  }
}

let sequence = 0;

/**
 * The cgroup (one directory per v1 hierarchy, one in v2) of one call, with its caps written before
 * any process enters. The caller puts the call's first process in every `directories` entry
 * before it forks, and calls `remove()` when the call ends.
 */
export class CallCgroup {
  private constructor(
    readonly layout: CgroupLayout,
    /** Directories whose `cgroup.procs` the call's first process writes its pid to. */
    readonly directories: readonly string[],
    /** The pids hierarchy's directory, if processes are capped. */
    readonly pidsDir: string | undefined,
    /** The memory hierarchy's directory, if memory is capped. */
    readonly memoryDir: string | undefined,
  ) {}

  /**
   * Makes the call's cgroup and writes its caps. Rejects (and leaves nothing behind) when a
   * directory or a cap cannot be written, so a call never runs with less than was promised.
   */
  static async create(layout: CgroupLayout, limits: ResourceLimits): Promise<CallCgroup> {
    const name = `toolgate-call-${process.pid}-${++sequence}-${Math.random().toString(36).slice(2, 8)}`;
    const pidsDir = layout.pidsParent ? join(layout.pidsParent, name) : undefined;
    const memoryDir = layout.memoryParent ? join(layout.memoryParent, name) : undefined;
    const directories = [...new Set([pidsDir, memoryDir].filter((d): d is string => d !== undefined))];
    const made: string[] = [];
    try {
      for (const dir of directories) {
        await mkdir(dir);
        made.push(dir);
      }
      if (layout.version === 2) {
        await writeFile(join(directories[0]!, 'pids.max'), String(limits.maxProcesses));
        await writeFile(join(directories[0]!, 'memory.max'), String(limits.memoryBytes));
        // Swap would let the call hold memory beyond the cap; absent when the kernel has no swap accounting.
        await writeFile(join(directories[0]!, 'memory.swap.max'), '0').catch(ignoreMissing);
      } else {
        if (pidsDir) await writeFile(join(pidsDir, 'pids.max'), String(limits.maxProcesses));
        if (memoryDir) {
          await writeFile(join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
          await writeFile(join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(ignoreMissing);
        }
      }
    } catch (error) {
      for (const dir of made) await rmdir(dir).catch(() => undefined);
      throw error;
    }
    return new CallCgroup(layout, directories, pidsDir, memoryDir);
  }

  /**
   * `create` for callers that cannot wait (a long-lived process prepared synchronously). The same
   * caps, the same all-or-nothing, with synchronous writes of a few bytes each.
   */
  static createSync(layout: CgroupLayout, limits: ResourceLimits): CallCgroup {
    const name = `toolgate-call-${process.pid}-${++sequence}-${Math.random().toString(36).slice(2, 8)}`;
    const pidsDir = layout.pidsParent ? join(layout.pidsParent, name) : undefined;
    const memoryDir = layout.memoryParent ? join(layout.memoryParent, name) : undefined;
    const directories = [...new Set([pidsDir, memoryDir].filter((d): d is string => d !== undefined))];
    const made: string[] = [];
    const optional = (path: string, value: string) => {
      try {
        writeFileSync(path, value);
      } catch (error) {
        ignoreMissing(error as NodeJS.ErrnoException);
      }
    };
    try {
      for (const dir of directories) {
        mkdirSync(dir);
        made.push(dir);
      }
      if (layout.version === 2) {
        writeFileSync(join(directories[0]!, 'pids.max'), String(limits.maxProcesses));
        writeFileSync(join(directories[0]!, 'memory.max'), String(limits.memoryBytes));
        optional(join(directories[0]!, 'memory.swap.max'), '0');
      } else {
        if (pidsDir) writeFileSync(join(pidsDir, 'pids.max'), String(limits.maxProcesses));
        if (memoryDir) {
          writeFileSync(join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
          optional(join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        }
      }
    } catch (error) {
      for (const dir of made) {
        try {
          rmdirSync(dir);
        } catch {
          // Best effort: an empty cgroup directory holds nothing.
        }
      }
      throw error;
    }
    return new CallCgroup(layout, directories, pidsDir, memoryDir);
  }

  /** Whether any process is in the cgroup right now (synchronous: a few bytes per directory). */
  hasMembersSync(): boolean {
    return this.directories.some((dir) => {
      try {
        return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() !== '';
      } catch {
        return false;
      }
    });
  }

  /** Removes the cgroup if nothing is in it any more; true when it is gone. */
  removeIfEmptySync(): boolean {
    let gone = true;
    for (const dir of this.directories) {
      try {
        rmdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') gone = false;
      }
    }
    return gone;
  }

  /** Kills every member and removes the cgroup, synchronously (at process exit). */
  killSync(): void {
    if (this.layout.version === 2) {
      try {
        writeFileSync(join(this.directories[0]!, 'cgroup.kill'), '1');
      } catch {
        // No cgroup.kill before Linux 5.14; the members are killed one by one below.
      }
    }
    for (const dir of this.directories) {
      let text = '';
      try {
        text = readFileSync(join(dir, 'cgroup.procs'), 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n')) {
        try {
          if (line.trim()) process.kill(Number(line), 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    // SIGKILLed members take a moment to be reaped; rmdir fails until then. At exit nothing else
    // runs, so a short blocking wait is the only way to leave no directory behind.
    const until = Date.now() + 500;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!this.removeIfEmptySync() && Date.now() < until) Atomics.wait(pause, 0, 0, 10);
  }

  /** Pids in the call's cgroup (any of its directories) right now. */
  async members(): Promise<number[]> {
    const pids = new Set<number>();
    for (const dir of this.directories) {
      const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const line of text.split('\n')) if (line.trim()) pids.add(Number(line));
    }
    return [...pids];
  }

  /**
   * Kills whatever is left in the cgroup and removes it. bwrap's exit already ends its pid
   * namespace; this catches anything still dying or that escaped it. Resolves `false` if the
   * directories could not be removed within `withinMs`.
   */
  async remove(withinMs = 5000): Promise<boolean> {
    const until = Date.now() + withinMs;
    let remaining = [...this.directories];
    while (remaining.length > 0) {
      if (this.layout.version === 2) await writeFile(join(remaining[0]!, 'cgroup.kill'), '1').catch(() => undefined);
      for (const pid of await this.members()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      const left: string[] = [];
      for (const dir of remaining) {
        // EBUSY until the last member has been reaped.
        await rmdir(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : left.push(dir)));
      }
      remaining = left;
      if (remaining.length === 0) return true;
      if (Date.now() > until) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

/**
 * Removes empty per-call cgroups that a gateway process which no longer exists left behind (it was
 * killed, or ended before it could remove them). A directory is only removed if its creator's pid
 * (in its name) is not alive and the kernel agrees it is empty; another gateway's are left alone.
 */
export function removeStaleCgroups(layout: CgroupLayout): void {
  for (const parent of new Set([layout.pidsParent, layout.memoryParent])) {
    if (!parent) continue;
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const creator = /^toolgate-call-(\d+)-/.exec(name)?.[1];
      if (!creator || Number(creator) === process.pid || existsSync(`/proc/${creator}`)) continue;
      try {
        rmdirSync(join(parent, name));
      } catch {
        // Not empty (a member still dying) or already gone: left for the next start.
      }
    }
  }
}

/**
 * The host command that puts its own pid into every cgroup directory, then execs the rest of its
 * arguments. The process enters the cgroup before bwrap starts, so nothing the call forks is ever
 * outside it. A directory it cannot enter ends it with status 125 and a `toolgate-cgroup:` line.
 */
export function enterCgroupsArgv(directories: readonly string[], command: string, args: readonly string[]): { command: string; args: string[] } {
  const script = [
    'while [ "$1" != -- ]; do',
    '  echo $$ > "$1/cgroup.procs" || { echo "toolgate-cgroup: cannot enter the call\'s cgroup" >&2; exit 125; }',
    '  shift',
    'done',
    'shift',
    // The shell exports the PWD it was started in; bwrap (the sandbox's init) gets only PATH.
    'unset PWD OLDPWD',
    'exec "$@"',
  ].join('\n');
  return { command: '/bin/sh', args: ['-c', script, 'toolgate-cgroup', ...directories, '--', command, ...args] };
}
