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
import { identityFiles } from './sandbox-identity.js';

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
}

const DEFAULT_READ_ONLY = ['/etc/alternatives', '/etc/ld.so.cache'];

/**
 * Tier 2: every process runs inside a bubblewrap sandbox that sees only the workspace (read-write
 * at `/workspace`), a read-only `/usr`, its own `/proc`, `/dev` and `/tmp`, and no network.
 * `bwrap` itself is supervised like a tier-1 process (own process group, output caps, deadline);
 * killing it kills the sandbox's whole pid namespace (`--die-with-parent`), so nothing started
 * inside survives the call.
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
      topLevel: this.topLevel,
      readOnly: this.readOnly,
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
   * caller kills it: keep the handle.
   */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    return this.command(spec, workspaceRoot);
  }

  async run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    validateLimits(limits);
    const prepared = this.command(spec, limits.workspaceRoot);
    const result = await superviseProcess({ ...prepared, stdin: spec.stdin }, limits, this.supervision);
    return sandboxOutcome(result, spec.command);
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
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
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
