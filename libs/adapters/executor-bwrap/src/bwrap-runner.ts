import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  ToolError,
  type PreparedCommand,
  type ProcessLimits,
  type ProcessResult,
  type ProcessRunner,
  type ProcessSpec,
} from '@toolgate/contracts';
import {
  resolveWorkingDirectory,
  superviseProcess,
  supervisionFrom,
  validateLimits,
  validateSpec,
  type Supervision,
  type WorkingDirectory,
} from '@toolgate/adapter-kit-process';
import { bwrapArgs, hostTopLevel, SANDBOX_WORKSPACE, type SandboxPlan, type TopLevelEntry } from './bwrap-argv.js';
import { checkReadOnlyPaths } from './read-only-paths.js';
import { identityFiles } from './sandbox-identity.js';
import { CallCgroup, enterCgroupsArgv, findCgroupLayout, removeStaleCgroups, usableLayout, type CapMechanism, type CgroupLayout, type ResourceLimits } from './call-cgroup.js';

/** Configuration of the tier-2 sandbox. */
export interface BwrapRunnerOptions extends Partial<Supervision> {
  /** The bubblewrap binary: a name looked up on `hostPath`, or an absolute path. Default `bwrap`. */
  readonly bwrapPath?: string;
  /** `PATH` used to find bwrap on the host (bwrap itself gets nothing else). Default `/usr/local/bin:/usr/bin:/bin`. */
  readonly hostPath?: string;
  /** `PATH` inside the sandbox. Default `/usr/local/bin:/usr/bin:/bin`. */
  readonly sandboxPath?: string;
  /** `LANG` inside the sandbox. Default `C.UTF-8`. */
  readonly lang?: string;
  /** The unprivileged identity inside the sandbox; it owns the workspace there. Default 1000:1000. */
  readonly uid?: number;
  readonly gid?: number;
  /** Size of the private `/tmp`. Default 64 MiB. */
  readonly tmpSizeBytes?: number;
  /**
   * Host paths bound read-only at the same place, when they exist. Default: `/etc/alternatives`
   * (Debian's program links into /usr) and `/etc/ld.so.cache`. Never bind anything holding secrets.
   */
  readonly readOnly?: readonly string[];
  /** Size of the private `/dev/shm`; the rest of `/dev` is read-only. Default 16 MiB. */
  readonly shmSizeBytes?: number;
  /** Most processes alive at once in one call (cgroup `pids`). Default 256. */
  readonly maxProcesses?: number;
  /** Most memory of one call together (cgroup `memory`; else `RLIMIT_AS` per process). Default 1 GiB. */
  readonly memoryBytes?: number;
  /**
   * Whether to cap each call in a cgroup of its own. Default true; false leaves only the
   * `prlimit` layer, as on a host without writable cgroups.
   */
  readonly useCgroups?: boolean;
  /** util-linux `prlimit`, looked up on `hostPath`; the memory cap where no memory cgroup can be made. Default `prlimit`. */
  readonly prlimitPath?: string;
}

/** Which per-call caps this host applies, and why one is missing. */
export interface ResourceCapReport {
  readonly processes: CapMechanism;
  readonly memory: CapMechanism;
  /** Why a cgroup cap could not be used here; empty when both are cgroup caps. */
  readonly problems: readonly string[];
}

/** How the caps are applied to each call, decided once per runner. */
interface CapPlan extends ResourceCapReport {
  readonly layout?: CgroupLayout;
  readonly rlimitMemory: boolean;
}

const DEFAULT_READ_ONLY = ['/etc/alternatives', '/etc/ld.so.cache'];

/**
 * Tier 2: every process runs inside a bubblewrap sandbox that sees only the workspace (read-write
 * at `/workspace`), a read-only `/usr`, its own `/proc`, `/dev` and `/tmp`, and no network.
 * `bwrap` itself is supervised like a tier-1 process (own process group, output caps, deadline);
 * killing it kills the sandbox's whole pid namespace (`--die-with-parent`), so nothing started
 * inside survives the call. Each call also runs in a cgroup of its own that caps its processes
 * and memory, entered before bwrap starts and removed after the call; where the host offers no
 * such cgroup, memory is capped per process by `RLIMIT_AS` and `resourceCaps()` says what is
 * missing (ADR 0028).
 */
export class BwrapRunner implements ProcessRunner {
  private readonly bwrapPath: string;
  private readonly hostPath: string;
  private readonly supervision: Supervision;
  private readonly sandboxPath: string;
  private readonly lang: string;
  private readonly uid: number;
  private readonly gid: number;
  private readonly tmpSizeBytes: number;
  private readonly readOnly: readonly string[];
  private readonly topLevel: readonly TopLevelEntry[];
  private readonly shmSizeBytes: number;
  private readonly limits: ResourceLimits;
  private readonly useCgroups: boolean;
  private readonly prlimitPath: string;
  private capPlan: Promise<CapPlan> | undefined;
  /** The plan once `caps()` has settled; `prepare()` is synchronous and can only use a settled one. */
  private planned: CapPlan | undefined;

  constructor(options: BwrapRunnerOptions = {}) {
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.hostPath = options.hostPath ?? '/usr/local/bin:/usr/bin:/bin';
    this.supervision = supervisionFrom(options);
    this.sandboxPath = options.sandboxPath ?? '/usr/local/bin:/usr/bin:/bin';
    this.lang = options.lang ?? 'C.UTF-8';
    this.uid = options.uid ?? 1000;
    this.gid = options.gid ?? 1000;
    this.tmpSizeBytes = options.tmpSizeBytes ?? 64 * 1024 * 1024;
    this.readOnly = options.readOnly ?? DEFAULT_READ_ONLY;
    this.shmSizeBytes = options.shmSizeBytes ?? 16 * 1024 * 1024;
    this.limits = { maxProcesses: options.maxProcesses ?? 256, memoryBytes: options.memoryBytes ?? 1024 * 1024 * 1024 };
    this.useCgroups = options.useCgroups ?? true;
    this.prlimitPath = options.prlimitPath ?? 'prlimit';
    // Below ~8 processes bash and bwrap cannot start; below 64 MiB not even git.
    if (!Number.isSafeInteger(this.limits.maxProcesses) || this.limits.maxProcesses < 8 || this.limits.maxProcesses > 4_194_304) {
      throw new Error(`sandbox process cap must be 8..4194304, got ${this.limits.maxProcesses}`);
    }
    if (!Number.isSafeInteger(this.limits.memoryBytes) || this.limits.memoryBytes < 64 * 1024 * 1024) {
      throw new Error(`sandbox memory cap must be at least 64 MiB, got ${this.limits.memoryBytes} bytes`);
    }
    for (const id of [this.uid, this.gid]) {
      if (!Number.isSafeInteger(id) || id < 1 || id > 65_534) throw new Error(`sandbox uid/gid must be 1..65534, got ${id}`);
    }
    for (const path of this.readOnly) {
      if (!isAbsolute(path) || path.includes('\0') || path === SANDBOX_WORKSPACE || path.startsWith(`${SANDBOX_WORKSPACE}/`)) {
        throw new Error(`read-only bind '${path}' must be an absolute path outside ${SANDBOX_WORKSPACE}`);
      }
    }
    this.topLevel = hostTopLevel();
  }

  /** The sandbox for a validated spec whose working directory has been resolved on the host. */
  private plan(spec: ProcessSpec, where: WorkingDirectory): SandboxPlan {
    const ids = identityFiles(this.uid, this.gid);
    return {
      workspace: where.root,
      cwd: where.relative,
      uid: this.uid,
      gid: this.gid,
      hostname: 'toolgate-sandbox',
      tmpSizeBytes: this.tmpSizeBytes,
      shmSizeBytes: this.shmSizeBytes,
      topLevel: this.topLevel,
      readOnly: this.readOnly,
      readOnlyPaths: checkReadOnlyPaths(spec.readOnlyPaths),
      passwdFile: ids.passwd,
      groupFile: ids.group,
      env: {
        PATH: this.sandboxPath,
        HOME: SANDBOX_WORKSPACE,
        LANG: this.lang,
        USER: 'sandbox',
        LOGNAME: 'sandbox',
        TMPDIR: '/tmp',
        ...spec.env,
      },
    };
  }

  /**
   * The host command that starts `spec` in a fresh sandbox. The spec is validated and its working
   * directory proven to stay inside the workspace (after symlinks) on the host first; bwrap runs
   * from the workspace root with nothing in its environment but the PATH that finds it.
   */
  private command(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    validateSpec(spec);
    const where = resolveWorkingDirectory(workspaceRoot, spec.cwd);
    const args = [...bwrapArgs(this.plan(spec, where)), '--', spec.command, ...spec.args];
    return { command: this.bwrapPath, args, env: { PATH: this.hostPath }, cwd: where.root };
  }

  /**
   * The bwrap command line for a long-lived process (an MCP server). Start it in its own process
   * group; when bwrap dies, everything inside its sandbox dies with it (`--die-with-parent` and
   * the sandbox's own pid namespace), and bwrap dies with the gateway's process only if the
   * caller kills it: keep the handle. Once `check()` has found cgroups usable, the process is
   * capped like a call, in a cgroup of its own that is removed soon after it empties.
   */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    const prepared = this.command(spec, workspaceRoot);
    // Capped by a cgroup of its own once check() has found cgroups usable. Not by RLIMIT_AS: a
    // long-lived runtime (node, a JVM) reserves far more address space than it uses.
    const layout = this.planned?.layout;
    if (!layout) return prepared;
    let cgroup: CallCgroup;
    try {
      cgroup = CallCgroup.createSync(layout, this.limits);
    } catch {
      throw new ToolError('the resource caps of the sandbox could not be set up', 'SANDBOX_FAILED');
    }
    watchServerCgroup(cgroup);
    return { ...prepared, ...enterCgroupsArgv(cgroup.directories, prepared.command, prepared.args) };
  }

  async run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    validateLimits(limits);
    const prepared = this.command(spec, limits.workspaceRoot);
    const plan = await this.caps();
    // A cap this host was found to support that cannot be set up now fails the call: it never runs with less.
    const cgroup = plan.layout
      ? await CallCgroup.create(plan.layout, this.limits).catch(() => {
          throw new ToolError('the per-call resource caps of the sandbox could not be set up', 'SANDBOX_FAILED');
        })
      : undefined;
    try {
      const result = await superviseProcess({ ...this.capped(prepared, plan, cgroup), stdin: spec.stdin }, limits, this.supervision);
      if (result.exitCode === 125 && result.stderr.startsWith('toolgate-cgroup: ')) {
        throw new ToolError('the per-call resource caps of the sandbox could not be set up', 'SANDBOX_FAILED');
      }
      return sandboxOutcome(result, spec.command);
    } finally {
      await cgroup?.remove();
    }
  }

  /** `prepared` started under the call's caps: inside its cgroup before bwrap starts, and below `RLIMIT_AS` where that is the memory cap. */
  private capped(prepared: PreparedCommand, plan: CapPlan, cgroup: CallCgroup | undefined): PreparedCommand {
    let command = prepared.command;
    let args: readonly string[] = prepared.args;
    if (plan.rlimitMemory) {
      args = [`--as=${this.limits.memoryBytes}`, '--', command, ...args];
      command = this.prlimitPath;
    }
    if (cgroup) ({ command, args } = enterCgroupsArgv(cgroup.directories, command, args));
    return { ...prepared, command, args };
  }

  /**
   * Which per-call caps this host applies: decided once, by making (and removing) a trial cgroup
   * with the caps written and by finding `prlimit`. Never rejects; a missing cap is reported.
   */
  private caps(): Promise<CapPlan> {
    this.capPlan ??= this.planCaps().then((plan) => (this.planned = plan));
    return this.capPlan;
  }

  /** What `caps()` found, for the operator: each cap's mechanism and why a cgroup was not usable. */
  async resourceCaps(): Promise<ResourceCapReport> {
    const { processes, memory, problems } = await this.caps();
    return { processes, memory, problems };
  }

  private async planCaps(): Promise<CapPlan> {
    const problems: string[] = [];
    let layout: CgroupLayout | undefined;
    if (!this.useCgroups) problems.push('per-call cgroups are turned off');
    else {
      const found = findCgroupLayout();
      if (!found) problems.push("no cgroup hierarchy offers the pids or memory controller below this process's cgroup");
      else layout = await usableLayout(found, this.limits, problems);
      if (layout) removeStaleCgroups(layout);
      if (found && !found.pidsParent) problems.push('the pids cgroup controller is not available');
      if (found && !found.memoryParent) problems.push('the memory cgroup controller is not available');
    }
    const cgroupName = layout?.version === 2 ? 'cgroup v2' : 'cgroup v1';
    const processes: CapMechanism = layout?.pidsParent ? cgroupName : 'none';
    let memory: CapMechanism = layout?.memoryParent ? cgroupName : 'none';
    let rlimitMemory = false;
    if (memory === 'none') {
      rlimitMemory = await this.prlimitWorks();
      if (rlimitMemory) memory = 'rlimit';
      else problems.push(`'${this.prlimitPath}' (util-linux) is not usable for a per-process memory limit`);
    }
    return { processes, memory, problems, rlimitMemory, ...(layout ? { layout } : {}) };
  }

  private async prlimitWorks(): Promise<boolean> {
    const scratch = await mkdtemp(join(tmpdir(), 'toolgate-prlimit-check-'));
    try {
      const result = await superviseProcess(
        { command: this.prlimitPath, args: ['--as=1073741824', '--', 'true'], cwd: scratch, env: { PATH: this.hostPath } },
        { workspaceRoot: scratch, timeoutMs: 5000, maxOutputBytes: 4096 },
        this.supervision,
      );
      return result.exitCode === 0;
    } catch {
      return false;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Resolves if a sandbox can be created on this machine; rejects with the reason an operator
   * needs (bwrap missing, user namespaces disabled, …).
   */
  async probe(): Promise<void> {
    const scratch = await mkdtemp(join(tmpdir(), 'toolgate-bwrap-check-'));
    const limits = { workspaceRoot: scratch, timeoutMs: 10_000, maxOutputBytes: 8192 };
    try {
      const host = { cwd: scratch, env: { PATH: this.hostPath } };
      const version = await superviseProcess({ ...host, command: this.bwrapPath, args: ['--version'] }, limits, this.supervision).catch((error: unknown) => {
        if (error instanceof ToolError && error.reason === 'COMMAND_NOT_FOUND') {
          throw new Error(
            `bubblewrap is not installed: '${this.bwrapPath}' ${isAbsolute(this.bwrapPath) ? 'does not exist' : 'is not on PATH'} (install the bubblewrap package, or set TOOLGATE_BWRAP_PATH to where it is)`,
          );
        }
        throw error;
      });
      if (version.exitCode !== 0) throw new Error(`'${this.bwrapPath} --version' failed: ${firstLine(version.stderr)}`);
      const trial = await superviseProcess(this.command({ command: 'sh', args: ['-c', 'exit 0'] }, scratch), limits, this.supervision);
      if (trial.exitCode !== 0) {
        throw new Error(
          `bwrap cannot create its sandbox on this machine (user namespaces disabled or restricted?): ${firstLine(trial.stderr) || `exit ${trial.exitCode ?? trial.signal}`}`,
        );
      }
      // The same trial under the caps, through run(): a cap found usable that then fails must fail here, not on the first call.
      const capped = await this.run({ command: 'sh', args: ['-c', 'exit 0'] }, limits).catch((error: unknown) => {
        throw new Error(`the sandbox cannot start under its per-call resource caps: ${(error as Error).message}`);
      });
      if (capped.exitCode !== 0) {
        throw new Error(
          `the sandbox cannot start under its per-call resource caps: ${firstLine(capped.stderr) || `exit ${capped.exitCode ?? capped.signal}`}`,
        );
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}

/**
 * Cgroups of long-lived sandboxes (MCP servers): when each was made and whether a process has
 * been seen in it. The runner does not see those processes end, so a timer (every second, not
 * keeping the gateway alive) removes a cgroup once it was seen entered and is empty again, or
 * is empty a minute after it was made (its process never started). At exit, every one left has
 * its members killed and is removed.
 */
const serverCgroups = new Map<CallCgroup, { readonly made: number; entered: boolean }>();
const SERVER_CGROUP_ENTRY_GRACE_MS = 60_000;
let serverCgroupSweep: NodeJS.Timeout | undefined;
process.once('exit', () => {
  for (const cgroup of serverCgroups.keys()) cgroup.killSync();
});

function watchServerCgroup(cgroup: CallCgroup): void {
  serverCgroups.set(cgroup, { made: Date.now(), entered: false });
  if (serverCgroupSweep) return;
  serverCgroupSweep = setInterval(() => releaseIdleServerCgroups(), 1000);
  serverCgroupSweep.unref();
}

/**
 * Removes the long-lived sandboxes' cgroups that are done: entered and now empty, or empty and
 * older than `minAgeMs`. Returns how many are left.
 */
export function releaseIdleServerCgroups(minAgeMs = SERVER_CGROUP_ENTRY_GRACE_MS): number {
  const now = Date.now();
  for (const [cgroup, state] of serverCgroups) {
    if (cgroup.hasMembersSync()) state.entered = true;
    else if ((state.entered || now - state.made >= minAgeMs) && cgroup.removeIfEmptySync()) serverCgroups.delete(cgroup);
  }
  if (serverCgroups.size === 0 && serverCgroupSweep) {
    clearInterval(serverCgroupSweep);
    serverCgroupSweep = undefined;
  }
  return serverCgroups.size;
}

/**
 * bwrap reports its own failures on stderr as `bwrap: …` with exit 1. Those messages name host
 * paths, so they become a generic sandbox error; a missing command becomes COMMAND_NOT_FOUND
 * like at every other tier.
 */
function sandboxOutcome(result: ProcessResult, command: string): ProcessResult {
  if (result.exitCode !== 1 || !result.stderr.startsWith('bwrap: ') || result.stdout !== '') return result;
  if (/^bwrap: execvp [^\n]*: No such file or directory/.test(result.stderr)) {
    throw new ToolError(`command '${command}' was not found on the sandbox PATH`, 'COMMAND_NOT_FOUND');
  }
  if (/^bwrap: execvp [^\n]*: Permission denied/.test(result.stderr)) {
    throw new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
  }
  throw new ToolError('the sandbox could not be set up for this command', 'SANDBOX_FAILED');
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
