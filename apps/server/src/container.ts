import type { ServerConfig } from './config.js';
import type { Log } from './logger.js';
import { bindAudit } from './bindings/audit.bindings.js';
import { Binder } from './bindings/binder.js';
import { bindBus } from './bindings/bus.bindings.js';
import { bindEgress } from './bindings/egress.bindings.js';
import { bindExecutors } from './bindings/executors.bindings.js';
import { bindGateway } from './bindings/gateway.bindings.js';
import { bindGraph } from './bindings/graph.bindings.js';
import { bindHttpFace } from './bindings/http-face.bindings.js';
import { bindMcp } from './bindings/mcp.bindings.js';
import { bindPrincipals } from './bindings/principals.bindings.js';
import { bindSearch } from './bindings/search.bindings.js';
import { bindState } from './bindings/state.bindings.js';
import { bindTools } from './bindings/tools.bindings.js';
import { bindWorkspaces } from './bindings/workspaces.bindings.js';
import { ConfigToken, LogToken } from './tokens.js';

/**
 * The binding modules, one per port (or group of ports opened together). Each picks its adapter
 * from the configuration through a table and says how it closes; a new backend is a row in one
 * of them, a new port is a new module here.
 */
export const BINDING_MODULES: readonly ((binder: Binder) => void)[] = [
  bindPrincipals,
  bindState,
  bindBus,
  bindGraph,
  bindAudit,
  bindEgress,
  bindSearch,
  bindMcp,
  bindExecutors,
  bindWorkspaces,
  bindTools,
  bindGateway,
  bindHttpFace,
];

/**
 * The composition root: the only place that knows which adapter implements which port. Nothing
 * is opened here; each value is made when a start step first asks for it (ADR 0036).
 */
export function buildContainer(config: ServerConfig, log: Log, modules: readonly ((binder: Binder) => void)[] = BINDING_MODULES): Binder {
  const binder = new Binder();
  binder.constant(ConfigToken, config);
  binder.constant(LogToken, log);
  for (const bind of modules) bind(binder);
  return binder;
}
