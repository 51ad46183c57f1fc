/** Where the workspace appears inside the container. */
export const CONTAINER_WORKSPACE = '/workspace';

/** Everything one `run` is built from; a plain value so the argv is a pure function of it. */
export interface ContainerPlan {
  readonly engine: 'docker' | 'podman';
  /** Unique per run, so a stuck container can be removed by name. */
  readonly name: string;
  readonly image: string;
  /** Host workspace root, symlinks resolved. */
  readonly workspace: string;
  /** Working directory relative to the workspace (`''` for the root). */
  readonly cwd: string;
  readonly command: string;
  readonly args: readonly string[];
  /** The complete environment of the command. */
  readonly env: Readonly<Record<string, string>>;
  /** `uid:gid` the command runs as. */
  readonly user: string;
  /** Podman without root: map the caller's uid into the container so workspace files keep their owner. */
  readonly keepId: boolean;
  readonly memory: string;
  readonly cpus: string;
  readonly pidsLimit: number;
  readonly tmpSizeBytes: number;
}

/**
 * The engine arguments for one confined run (docker and podman accept the same ones): no
 * network, a read-only root file system, every capability dropped, no privilege escalation,
 * bounded memory, CPU and process count, a private size-capped `/tmp`, and the workspace as the
 * only mount. `--pull never`: the operator decides which image exists; a run never fetches one.
 * The command is the entrypoint, so an image's own ENTRYPOINT cannot wrap or replace it.
 */
export function containerRunArgs(plan: ContainerPlan): string[] {
  if (plan.workspace.includes(',')) {
    // `--mount` is comma-separated; a comma in the path would inject mount options.
    throw new Error('the workspace path must not contain a comma for the container tier');
  }
  const args = [
    'run',
    '--rm',
    '--interactive',
    '--name',
    plan.name,
    '--pull',
    'never',
    '--network',
    'none',
    '--read-only',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--pids-limit',
    String(plan.pidsLimit),
    '--memory',
    plan.memory,
    '--cpus',
    plan.cpus,
    '--user',
    plan.user,
  ];
  if (plan.keepId) args.push('--userns', 'keep-id');
  args.push(
    '--hostname',
    'toolgate-sandbox',
    '--tmpfs',
    `/tmp:rw,nosuid,nodev,size=${plan.tmpSizeBytes}`,
    '--mount',
    `type=bind,source=${plan.workspace},target=${CONTAINER_WORKSPACE}`,
    '--workdir',
    plan.cwd === '' ? CONTAINER_WORKSPACE : `${CONTAINER_WORKSPACE}/${plan.cwd}`,
    '--init',
  );
  for (const [name, value] of Object.entries(plan.env)) args.push('--env', `${name}=${value}`);
  // `=` form: a command that starts with '-' stays the entrypoint's value, never an option.
  args.push(`--entrypoint=${plan.command}`, plan.image, ...plan.args);
  return args;
}
