import { randomUUID } from 'node:crypto';
import { homedir, tmpdir } from 'node:os';
import {
  ToolError,
  type PreparedCommand,
  type ProcessLimits,
  type ProcessResult,
  type ProcessRunner,
  type ProcessSpec,
} from '@toolgate/contracts';
import { resolveWorkingDirectory, superviseProcess, supervisionFrom, validateLimits, validateSpec, type Supervision } from '@toolgate/adapter-kit-process';
import { CONTAINER_WORKSPACE, containerRunArgs } from './container-argv.js';

export type ContainerEngine = 'docker' | 'podman';

/** Configuration of the container tier. */
export interface ContainerRunnerOptions extends Partial<Supervision> {
  /** The image every process runs in; it must already be present (runs never pull). */
  readonly image: string;
  /** Which engine to use. Default: the first of podman, docker that answers. */
  readonly engine?: ContainerEngine;
  /** `PATH` used to find the engine CLI on the host. Default `/usr/local/bin:/usr/bin:/bin`. */
  readonly hostPath?: string;
  /** `PATH` inside the container. Default `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`. */
  readonly sandboxPath?: string;
  /** `LANG` inside the container. Default `C.UTF-8`. */
  readonly lang?: string;
  /** `uid:gid` inside the container. Default the server's own, so workspace files keep their owner. */
  readonly user?: string;
  /** Default `512m`. */
  readonly memory?: string;
  /** Default `1`. */
  readonly cpus?: string;
  /** Default 256. */
  readonly pidsLimit?: number;
  /** Size of the private `/tmp`. Default 64 MiB. */
  readonly tmpSizeBytes?: number;
  /** How long `check()` waits for an engine to answer. Default 5000 ms. */
  readonly probeTimeoutMs?: number;
}

/** Variables the engine CLI needs to find its daemon; passed from the server's environment when set. */
const ENGINE_VARIABLES = [
  'DOCKER_HOST',
  'DOCKER_CONTEXT',
  'DOCKER_CONFIG',
  'DOCKER_CERT_PATH',
  'DOCKER_TLS_VERIFY',
  'CONTAINER_HOST',
  'CONTAINER_CONNECTION',
  'XDG_RUNTIME_DIR',
];
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/;
const MEMORY = /^\d+[bkmg]?$/i;
const CPUS = /^\d+(\.\d+)?$/;
const USER = /^\d+(:\d+)?$/;

/**
 * Runs every process in a fresh container (podman or docker) with no network, a read-only root,
 * no capabilities, no privilege escalation, bounded resources and the workspace as its only
 * mount. The engine CLI is supervised like a tier-1 process; because killing the CLI does not
 * stop a container, a run that was stopped (deadline, flood, abort) also removes its container
 * by name.
 */
export class ContainerRunner implements ProcessRunner {
  private readonly image: string;
  private readonly configured: ContainerEngine | undefined;
  private resolved: ContainerEngine | undefined;
  private readonly hostPath: string;
  private readonly sandboxPath: string;
  private readonly lang: string;
  private readonly user: string;
  private readonly memory: string;
  private readonly cpus: string;
  private readonly pidsLimit: number;
  private readonly tmpSizeBytes: number;
  private readonly probeTimeoutMs: number;
  private readonly supervision: Supervision;

  constructor(options: ContainerRunnerOptions) {
    if (!IMAGE.test(options.image ?? '')) throw new Error(`'${options.image}' is not a valid container image reference`);
    this.image = options.image;
    this.configured = options.engine;
    this.hostPath = options.hostPath ?? '/usr/local/bin:/usr/bin:/bin';
    this.sandboxPath = options.sandboxPath ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
    this.lang = options.lang ?? 'C.UTF-8';
    this.user = options.user ?? `${process.getuid?.() ?? 1000}:${process.getgid?.() ?? 1000}`;
    this.memory = options.memory ?? '512m';
    this.cpus = options.cpus ?? '1';
    this.pidsLimit = options.pidsLimit ?? 256;
    this.tmpSizeBytes = options.tmpSizeBytes ?? 64 * 1024 * 1024;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 5000;
    this.supervision = supervisionFrom(options);
    if (options.engine !== undefined && options.engine !== 'docker' && options.engine !== 'podman') {
      throw new Error(`container engine must be 'docker' or 'podman', got '${String(options.engine)}'`);
    }
    if (!MEMORY.test(this.memory)) throw new Error(`'${this.memory}' is not a memory size like 512m`);
    if (!CPUS.test(this.cpus)) throw new Error(`'${this.cpus}' is not a CPU count like 1 or 0.5`);
    if (!USER.test(this.user)) throw new Error(`'${this.user}' is not a numeric uid:gid`);
    if (!Number.isSafeInteger(this.pidsLimit) || this.pidsLimit < 1) throw new Error('pidsLimit must be a positive integer');
  }

  /** The engine in use: the configured one, or the one `probe()` found answering. */
  get engine(): ContainerEngine | undefined {
    return this.configured ?? this.resolved;
  }

  /**
   * The engine CLI's own environment: enough to find its daemon, never the server's secrets.
   * HOME is the server's, not the workspace, so a tool cannot plant an engine config (with a
   * credential helper to execute) where the CLI would read it.
   */
  private engineEnvironment(): Record<string, string> {
    const env: Record<string, string> = { PATH: this.hostPath, HOME: homedir() };
    for (const name of ENGINE_VARIABLES) {
      const value = process.env[name];
      if (value !== undefined && value !== '') env[name] = value;
    }
    return env;
  }

  private command(spec: ProcessSpec, workspaceRoot: string, name: string): PreparedCommand {
    const engine = this.engine;
    if (!engine) throw new Error('the container engine is not known yet: call check() before running anything');
    validateSpec(spec);
    const where = resolveWorkingDirectory(workspaceRoot, spec.cwd);
    const args = containerRunArgs({
      engine,
      name,
      image: this.image,
      workspace: where.root,
      cwd: where.relative,
      command: spec.command,
      args: spec.args,
      env: { PATH: this.sandboxPath, HOME: CONTAINER_WORKSPACE, LANG: this.lang, TMPDIR: '/tmp', ...spec.env },
      user: this.user,
      keepId: engine === 'podman' && process.getuid?.() !== 0,
      memory: this.memory,
      cpus: this.cpus,
      pidsLimit: this.pidsLimit,
      tmpSizeBytes: this.tmpSizeBytes,
    });
    return { command: engine, args, env: this.engineEnvironment(), cwd: where.root };
  }

  /**
   * The engine command line for a long-lived process (an MCP server over stdio). The container
   * is removed when its stdin closes and the process exits (`--rm`); killing only the CLI can
   * leave it running, so close its stdin first.
   */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    return this.command(spec, workspaceRoot, `toolgate-${randomUUID()}`);
  }

  async run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    validateLimits(limits);
    if (!this.engine) await this.probe();
    const name = `toolgate-${randomUUID()}`;
    const prepared = this.command(spec, limits.workspaceRoot, name);
    let result: ProcessResult;
    try {
      result = await superviseProcess({ ...prepared, stdin: spec.stdin }, limits, this.supervision);
    } catch (error) {
      await this.remove(name, prepared.cwd);
      throw error;
    }
    if (result.timedOut || result.signal !== null) await this.remove(name, prepared.cwd);
    return containerOutcome(result, spec.command);
  }

  /** Removes a container that outlived its CLI; best effort, bounded. */
  private async remove(name: string, cwd: string): Promise<void> {
    const engine = this.engine;
    if (!engine) return;
    // `docker rm --force` kills at once; podman's stops first and waits 10 s for a process that
    // ignores SIGTERM, which would hold the call that long past its deadline.
    const args = engine === 'podman' ? ['rm', '--force', '--time', '0', name] : ['rm', '--force', name];
    await superviseProcess(
      { command: engine, args, cwd, env: this.engineEnvironment() },
      { workspaceRoot: cwd, timeoutMs: 15_000, maxOutputBytes: 4096 },
      this.supervision,
    ).catch(() => undefined);
  }

  /**
   * Finds an engine that answers and checks the image is present. Rejects with what an operator
   * needs to fix it, e.g. `no container engine answers: podman not installed; docker CLI present
   * but daemon unreachable (…)`.
   */
  async probe(): Promise<void> {
    const candidates: ContainerEngine[] = this.configured ? [this.configured] : ['podman', 'docker'];
    const problems: string[] = [];
    let found: ContainerEngine | undefined;
    for (const engine of candidates) {
      const problem = await this.ask(engine, engine === 'docker' ? ['version', '--format', '{{.Server.Version}}'] : ['info', '--format', '{{.Version.Version}}']);
      if (problem === undefined) {
        found = engine;
        break;
      }
      problems.push(problem);
    }
    if (!found) throw new Error(`no container engine answers: ${problems.join('; ')}`);
    const image = await this.ask(found, ['image', 'inspect', '--format', '{{.Id}}', this.image]);
    if (image !== undefined) {
      throw new Error(`container image '${this.image}' is not available to ${found} (${image}); pull it first: runs never pull`);
    }
    this.resolved = found;
  }

  /** Runs an engine command; undefined if it answered, else why not. */
  private async ask(engine: ContainerEngine, args: string[]): Promise<string | undefined> {
    const cwd = tmpdir();
    try {
      const result = await superviseProcess(
        { command: engine, args, cwd, env: this.engineEnvironment() },
        { workspaceRoot: cwd, timeoutMs: this.probeTimeoutMs, maxOutputBytes: 8192 },
        this.supervision,
      );
      if (result.timedOut) return `${engine} CLI present but no answer within ${this.probeTimeoutMs} ms`;
      if (result.exitCode !== 0) {
        const detail = result.stderr.trim().split('\n')[0] ?? '';
        return `${engine} CLI present but daemon unreachable${detail ? ` (${detail})` : ''}`;
      }
      return undefined;
    } catch (error) {
      if (error instanceof ToolError && error.reason === 'COMMAND_NOT_FOUND') return `${engine} not installed`;
      return `${engine} could not be started (${(error as Error).message})`;
    }
  }
}

/**
 * The one line the container's init (`--init`: catatonit under podman, tini under docker) prints
 * when it cannot start the command, and exits 1 (catatonit) or 127/126 (tini).
 */
const INIT_EXEC_FAILURE = /^(?:ERROR \(catatonit:\d+\): failed to exec pid1|\[FATAL tini \(\d+\)\] exec .* failed): (No such file or directory|Permission denied)$/;

/**
 * The engine's own failures (exit 125, or a missing entrypoint) become the same errors as at the
 * other tiers; their text names host details, so it is not passed on.
 */
function containerOutcome(result: ProcessResult, command: string): ProcessResult {
  const init = result.stdout === '' && [1, 126, 127].includes(result.exitCode ?? -1) ? INIT_EXEC_FAILURE.exec(result.stderr.replace(/\n$/, '')) : null;
  if (init?.[1] === 'No such file or directory') {
    throw new ToolError(`command '${command}' was not found on the container PATH`, 'COMMAND_NOT_FOUND');
  }
  if (init?.[1] === 'Permission denied') throw new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
  if (result.exitCode === 127 || result.exitCode === 126) {
    if (/executable file .*not found|no such file or directory: OCI runtime|command was not found/i.test(result.stderr)) {
      throw new ToolError(`command '${command}' was not found on the container PATH`, 'COMMAND_NOT_FOUND');
    }
    if (/permission denied: OCI runtime|not executable/i.test(result.stderr) && result.stdout === '') {
      throw new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
    }
  }
  if (result.exitCode === 125 && result.stdout === '') {
    throw new ToolError('the container could not be started for this command', 'SANDBOX_FAILED');
  }
  return result;
}
