/**
 * The process kit: the host-side process machinery shared by the process tiers (subprocess,
 * bubblewrap, container), so that every tier validates, confines, caps and kills in exactly the
 * same way (ADR 0039, ADR 0040). A tier adds only what is its own: how a validated spec becomes
 * the host command line (plain, inside bwrap, inside a container engine).
 *
 * - `process-spec`: spec and limit validation, working-directory confinement.
 * - `capped-output`: per-stream output cap that never splits a UTF-8 character.
 * - `supervised-process`: one process group started, capped, killed at the deadline or on a flood.
 * - `call-scope`: the runner a handler sees, bound to its call's workspace and deadline.
 *
 * Depends only on `@toolgate/contracts` and Node built-ins; only executor adapters import it.
 * It exports only what a tier calls; the pieces those are built from (the output cap, the
 * call-scoped runner, the path test, the default supervision) stay inside, tested beside their
 * modules, so a tier cannot bypass the path it is meant to take.
 */
export { executeWithProcesses } from './call-scope.js';
export { resolveWorkingDirectory, validateLimits, validateSpec, type WorkingDirectory } from './process-spec.js';
export { superviseProcess, supervisionFrom, type SupervisedCommand, type Supervision } from './supervised-process.js';
