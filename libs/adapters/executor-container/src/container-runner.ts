import { randomUUID } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  flattenText,
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
  /**
   * How long `check()` waits for each engine step: the engine's answer, the image lookup, and the
   * trial container (and its removal, should it hang). Default 5000 ms.
   */
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
/** Longest engine error line `check()` passes on: enough to name the fault, never a flood. */
const ENGINE_LINE_MAX = 240;
/** What the engine CLI may print, per stream, while `check()` asks it something. */
const PROBE_OUTPUT_BYTES = 8192;

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

  private command(spec: ProcessSpec, workspaceRoot: string, name: string, engine = this.engine): PreparedCommand {
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
    const engine = this.engine;
    const name = `toolgate-${randomUUID()}`;
    const prepared = this.command(spec, limits.workspaceRoot, name, engine);
    let result: ProcessResult;
    try {
      result = await superviseProcess({ ...prepared, stdin: spec.stdin }, limits, this.supervision);
    } catch (error) {
      await this.remove(engine, name, prepared.cwd);
      throw error;
    }
    if (result.timedOut || result.signal !== null) await this.remove(engine, name, prepared.cwd);
    return containerOutcome(result, spec.command);
  }

  /** Removes a container that outlived its CLI; best effort, bounded. */
  private async remove(engine: ContainerEngine | undefined, name: string, cwd: string, timeoutMs = 15_000): Promise<void> {
    if (!engine) return;
    // `docker rm --force` kills at once; podman's stops first and waits 10 s for a process that
    // ignores SIGTERM, which would hold the call that long past its deadline.
    const args = engine === 'podman' ? ['rm', '--force', '--time', '0', name] : ['rm', '--force', name];
    await superviseProcess(
      { command: engine, args, cwd, env: this.engineEnvironment() },
      { workspaceRoot: cwd, timeoutMs, maxOutputBytes: 4096 },
      this.supervision,
    ).catch(() => undefined);
  }

  /**
   * Finds an engine that answers, checks the image is present, and starts one trial container
   * from it with the flags every run uses. Rejects with what an operator needs to fix it, e.g.
   * `no container engine answers: podman not installed; docker CLI present but daemon unreachable
   * (…)`, or `podman answers but cannot start a container from '…': Error: runc: … error setting
   * rlimit type 7: operation not permitted: OCI permission denied`.
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
    const image = await this.ask(found, ['image', 'inspect', '--format', '{{.Id}}', this.image], (detail) => engineLine(detail) ?? 'not found');
    if (image !== undefined) {
      throw new Error(`container image '${this.image}' is not available to ${found} (${image}); pull it first: runs never pull`);
    }
    const trial = await this.trial(found);
    if (trial !== undefined) throw new Error(trial);
    this.resolved = found;
  }

  /**
   * Starts one container as a call would (same confinement, same kind of mount, `--pull never`)
   * running `true`, so an engine that answers but cannot start a container (a runtime refusing
   * the ulimits, the cgroup layout or the mount; a missing init) is refused at start instead of
   * failing every call. Undefined if the container started, else why not. An image without
   * `true` still passes: its init reporting the missing command shows the container started.
   */
  private async trial(engine: ContainerEngine): Promise<string | undefined> {
    const from = `${engine} answers but cannot start a container from '${this.image}'`;
    let workspace: string;
    try {
      // An empty directory of its own, mounted as a call's workspace is, so a refused bind mount shows here too.
      workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-check-')));
    } catch (error) {
      return `${from}: no directory for its trial workspace in the temporary directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    const name = `toolgate-check-${randomUUID()}`;
    try {
      const prepared = this.command({ command: 'true', args: [] }, workspace, name, engine);
      let result: ProcessResult;
      try {
        result = await superviseProcess(
          prepared,
          { workspaceRoot: workspace, timeoutMs: this.probeTimeoutMs, maxOutputBytes: PROBE_OUTPUT_BYTES },
          this.supervision,
        );
      } catch (error) {
        return `${engine} could not be started (${(error as Error).message})`;
      }
      if (result.timedOut || result.signal !== null) await this.remove(engine, name, workspace, this.probeTimeoutMs);
      if (result.timedOut) return `${from}: the trial container did not finish within ${this.probeTimeoutMs} ms`;
      if (result.exitCode === 0 || initExecFailure(result) !== undefined) return undefined;
      const line = engineLine(result.stderr) ?? engineLine(result.stdout);
      const ended = result.exitCode === null ? `stopped by ${result.signal ?? 'a signal'}` : `exit ${result.exitCode}`;
      return `${from}: ${line ?? `the engine printed nothing (${ended})`}${result.stderrTruncated || result.stdoutTruncated ? ' (its output was cut off)' : ''}`;
    } catch (error) {
      // The trial's own mount refused (a comma in the temporary directory's path).
      return `${from}: ${(error as Error).message}`;
    } finally {
      await rm(workspace, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * Runs an engine command; undefined if it answered, else why not. `refused` words an answer
   * that is a refusal (default: the engine's daemon is unreachable, with its first line).
   */
  private async ask(engine: ContainerEngine, args: string[], refused = (stderr: string) => unreachable(engine, stderr)): Promise<string | undefined> {
    const cwd = tmpdir();
    try {
      const result = await superviseProcess(
        { command: engine, args, cwd, env: this.engineEnvironment() },
        { workspaceRoot: cwd, timeoutMs: this.probeTimeoutMs, maxOutputBytes: PROBE_OUTPUT_BYTES },
        this.supervision,
      );
      if (result.timedOut) return `${engine} CLI present but no answer within ${this.probeTimeoutMs} ms`;
      if (result.exitCode !== 0) return refused(result.stderr);
      return undefined;
    } catch (error) {
      if (error instanceof ToolError && error.reason === 'COMMAND_NOT_FOUND') return `${engine} not installed`;
      return `${engine} could not be started (${(error as Error).message})`;
    }
  }
}

/** An engine CLI whose daemon did not answer, with the CLI's first line (which names the socket it tried). */
function unreachable(engine: ContainerEngine, stderr: string): string {
  const detail = boundedLine(stderr.trim().split('\n')[0] ?? '');
  return `${engine} CLI present but daemon unreachable${detail ? ` (${detail})` : ''}`;
}

/**
 * The one line the container's init (`--init`: catatonit under podman, tini under docker) prints
 * when it cannot start the command, and exits 1 (catatonit) or 127/126 (tini).
 */
const INIT_EXEC_FAILURE = /^(?:ERROR \(catatonit:\d+\): failed to exec pid1|\[FATAL tini \(\d+\)\] exec .* failed): (No such file or directory|Permission denied)$/;

/** Why the container's init could not start the command, when that one line is the whole output. */
function initExecFailure(result: ProcessResult): 'No such file or directory' | 'Permission denied' | undefined {
  if (result.stdout !== '' || ![1, 126, 127].includes(result.exitCode ?? -1)) return undefined;
  return INIT_EXEC_FAILURE.exec(result.stderr.replace(/\n$/, ''))?.[1] as 'No such file or directory' | 'Permission denied' | undefined;
}

/** An absolute host path (or one under `~`), not the path part of an image reference like `docker.io/library/x`. */
const HOST_PATH = /(?<![\w.@-])~?\/[^\s'"`:;()[\]{}<>]*/g;

/** One line made safe to show: terminal escapes and invisible characters dropped, at most `ENGINE_LINE_MAX` characters. */
function boundedLine(line: string): string {
  return flattenText(line, ENGINE_LINE_MAX);
}

/**
 * The engine's first error line (the first that says `error`, else the first that is not empty:
 * engines print warnings before the error), for the operator who must fix the engine: bounded,
 * and with host paths (storage, bundle and mount directories) replaced, since the reason is
 * logged and may be shown beyond the host.
 */
function engineLine(text: string): string | undefined {
  const lines = text
    .split(/\r?\n|\r/)
    // Flattened before the paths are replaced, so an escape sequence cannot split a path from its match.
    .map((raw) => boundedLine(flattenText(raw, PROBE_OUTPUT_BYTES).replace(HOST_PATH, '<path>')))
    .filter((line) => line !== '');
  return lines.find((line) => /error/i.test(line)) ?? lines[0];
}

/**
 * The engine's own failures (exit 125, or a missing entrypoint) become the same errors as at the
 * other tiers; their text names host details, so it is not passed on.
 */
function containerOutcome(result: ProcessResult, command: string): ProcessResult {
  const init = initExecFailure(result);
  if (init === 'No such file or directory') {
    throw new ToolError(`command '${command}' was not found on the container PATH`, 'COMMAND_NOT_FOUND');
  }
  if (init === 'Permission denied') throw new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
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
