import { stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { GuardedHttpClient } from '@toolgate/adapter-net-guard';
import { demoDirectoryData, parsePrincipalsFile, StaticPrincipalDirectory } from '@toolgate/adapter-principals-file';
import { OidcPrincipalDirectory } from '@toolgate/adapter-principals-oidc';
import { PrincipalDirectoryToken, token, type PrincipalDirectory, type Token } from '@toolgate/contracts';
import type { OidcConfig, ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { PrincipalsReloader } from '../principals/principals-reloader.js';
import { StartupError } from '../startup-error.js';
import { asStartupError, checkFileOutsideWorkspace, describeSetting, pathSetting, readOperatorFile } from '../startup-paths.js';
import { ConfigToken, DemoPrincipalToken, LogToken, PrincipalsReloadToken } from '../tokens.js';
import type { Binder } from './binder.js';

/** Where principals come from: the choice `TOOLGATE_PRINCIPALS` and `TOOLGATE_PRINCIPALS_FILE` make. */
type PrincipalSource = 'file' | 'oidc' | 'demo';

/** The principals of one source, whether they are the dev principal `demo`, and how they are read again. */
interface Principals {
  readonly directory: PrincipalDirectory;
  readonly demo: boolean;
  /** Absent for a source with nothing to re-read (the dev principal). */
  readonly reloader?: PrincipalsReloader;
  /** What the source holds open besides the watch (the OIDC directory's HTTP client). */
  readonly close?: () => Promise<void>;
}

/** Each principal source and how it is read: one row per source. */
const PRINCIPAL_SOURCES = {
  // No principals file: one dev principal, for loopback only (the server refuses anything else).
  demo: async () => ({ directory: new StaticPrincipalDirectory(demoDirectoryData()), demo: true }),
  file: async (config, log) => {
    const { directory, reloader } = await readPrincipalsFile(config, log, false);
    return { directory, demo: false, reloader };
  },
  // Bearer JWTs of an OpenID issuer; the principals file holds the roles and tenants they are
  // checked against, re-read like the file source's (ADR 0074).
  oidc: async (config, log) => {
    const oidc = config.oidc!;
    const { directory: policy, reloader } = await readPrincipalsFile(config, log, true);
    const http = identityHttpClient(config, oidc);
    const directory = new OidcPrincipalDirectory({
      ...oidc,
      http,
      policy,
      log: (level, message) => log(level, message),
    });
    // Discovery and the keys before the first caller; an issuer not up yet is no reason not to start.
    const warm = await directory.warmUp();
    if (warm === 'ready') log('info', `principals: bearer JWTs of ${oidc.issuer} for audience ${oidc.audience}; roles and tenants from ${describeSetting(pathSetting(config, 'principalsFile'))}`);
    else log('warn', `principals: OIDC issuer ${oidc.issuer} cannot be used yet (${warm}); calls with a token are answered 503 until it can`);
    return { directory, demo: false, reloader, close: async () => http.close() };
  },
} satisfies Record<PrincipalSource, (config: ServerConfig, log: Log) => Promise<Principals>>;

/** The source the configuration selects. */
function principalSource(config: ServerConfig): PrincipalSource {
  if (config.principals === 'oidc') return 'oidc';
  return config.principalsFile ? 'file' : 'demo';
}

/**
 * The principals file, read and checked as at start, with its reloader: SIGHUP and a change to
 * the file re-read it, a file that fails then is refused, and what was read keeps serving (ADR
 * 0073). `policyOnly` reads only roles and tenants, for the OIDC source.
 */
async function readPrincipalsFile(config: ServerConfig, log: Log, policyOnly: boolean): Promise<{ directory: StaticPrincipalDirectory; reloader: PrincipalsReloader }> {
  const setting = pathSetting(config, 'principalsFile');
  const read = () => readOperatorFile(setting, config.principalsFile!);
  // A hard link has no real path of its own to compare with the workspace root, so a file
  // with more than one name is refused: another name may be inside the workspace.
  const oneName = async () => {
    const links = await stat(config.principalsFile!).then((info) => (info.isFile() ? info.nlink : 1), () => 1);
    if (links > 1) throw new Error(`it has ${links} hard links; a principals file must have one name, since another may be inside the workspace root`);
  };
  await oneName().catch((error: unknown) => {
    throw new StartupError(`${describeSetting(setting)}: ${(error as Error).message}`);
  });
  const text = await asStartupError(read());
  let directory: StaticPrincipalDirectory;
  try {
    const { data, warnings } = parsePrincipalsFile(text, { policyOnly });
    for (const warning of warnings) log('warn', `principals file: ${warning}`);
    directory = new StaticPrincipalDirectory(data);
  } catch (error) {
    throw new StartupError(`${describeSetting(setting)}: ${(error as Error).message}`);
  }
  // The start's check that the file is outside the workspace root (start-steps.ts) is made
  // again before each re-read: the path may have become a link to a file an agent can write.
  const reread = async () => {
    await checkFileOutsideWorkspace(setting, config.principalsFile!, pathSetting(config, 'workspaceRoot'), config.workspaceRoot);
    await oneName();
    return read();
  };
  const reloader = new PrincipalsReloader({ read: reread, directory, log, path: config.principalsFile!, what: describeSetting(setting), policyOnly }).watch();
  return { directory, reloader };
}

/**
 * The guarded client the OIDC directory fetches discovery and keys with: the operator's opened
 * ranges, and the issuer's own loopback address when it is a development issuer on loopback
 * (the only place config accepts an http issuer). Which hosts may be asked at all is the
 * directory's rule: the issuer's, and those of TOOLGATE_OIDC_JWKS_HOSTS.
 */
function identityHttpClient(config: ServerConfig, oidc: OidcConfig): GuardedHttpClient {
  const host = new URL(oidc.issuer).hostname.replace(/^\[|\]$/g, '');
  const loopback = isIP(host) === 4 ? [`${host}/32`] : isIP(host) === 6 ? [`${host}/128`] : [];
  try {
    return new GuardedHttpClient({ allowedCidrs: [...config.egress.allowedCidrs, ...(new URL(oidc.issuer).protocol === 'http:' ? loopback : [])], defaultTimeoutMs: 5_000 });
  } catch (error) {
    throw new StartupError(`TOOLGATE_EGRESS_ALLOWED_CIDRS: ${(error as Error).message}`);
  }
}

const PrincipalsToken: Token<Principals> = token('Principals');

/**
 * Port `PrincipalDirectory`: token → principal, read at start and again on SIGHUP or a change to
 * the file (closing stops the watch). `PrincipalsReloadToken` is what SIGHUP calls.
 */
export function bindPrincipals(binder: Binder): void {
  binder
    .resolved(PrincipalsToken, { config: ConfigToken, log: LogToken }, ({ config, log }) => PRINCIPAL_SOURCES[principalSource(config)](config, log))
    .onDeactivation(async (principals) => {
      principals.reloader?.close();
      await principals.close?.();
    });
  binder.resolved(PrincipalsReloadToken, { principals: PrincipalsToken, log: LogToken }, ({ principals, log }) => async (trigger: string) => {
    if (principals.reloader) return principals.reloader.reload(trigger);
    log('info', `${trigger}: nothing to reload (no TOOLGATE_PRINCIPALS_FILE; the dev principal serves)`);
    return false;
  });
  binder.resolved(PrincipalDirectoryToken, { principals: PrincipalsToken }, ({ principals }) => principals.directory);
  binder.resolved(DemoPrincipalToken, { principals: PrincipalsToken }, ({ principals }) => principals.demo);
}
