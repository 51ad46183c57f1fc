import { PrincipalDirectoryToken, token, type PrincipalDirectory, type Token } from '@toolgate/contracts';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { demoDirectoryData, parsePrincipalsFile } from '../principals/principals-file.js';
import { StaticPrincipalDirectory } from '../principals/static-principal-directory.js';
import { StartupError } from '../startup-error.js';
import { asStartupError, describeSetting, pathSetting, readOperatorFile } from '../startup-paths.js';
import { ConfigToken, DemoPrincipalToken, LogToken } from '../tokens.js';
import type { Binder } from './binder.js';

/** Where principals come from: the choice `TOOLGATE_PRINCIPALS_FILE` makes. */
type PrincipalSource = 'file' | 'demo';

/** The principals of one source, and whether they are the dev principal `demo`. */
interface Principals {
  readonly directory: PrincipalDirectory;
  readonly demo: boolean;
}

/** Each principal source and how it is read. A new source (OIDC, say) is one more row. */
const PRINCIPAL_SOURCES = {
  // No principals file: one dev principal, for loopback only (the server refuses anything else).
  demo: async () => ({ directory: new StaticPrincipalDirectory(demoDirectoryData()), demo: true }),
  file: async (config, log) => {
    const setting = pathSetting(config, 'principalsFile');
    const text = await asStartupError(readOperatorFile(setting, config.principalsFile!));
    try {
      const { data, warnings } = parsePrincipalsFile(text);
      for (const warning of warnings) log('warn', `principals file: ${warning}`);
      return { directory: new StaticPrincipalDirectory(data), demo: false };
    } catch (error) {
      throw new StartupError(`${describeSetting(setting)}: ${(error as Error).message}`);
    }
  },
} satisfies Record<PrincipalSource, (config: ServerConfig, log: Log) => Promise<Principals>>;

/** The source the configuration selects. */
function principalSource(config: ServerConfig): PrincipalSource {
  return config.principalsFile ? 'file' : 'demo';
}

const PrincipalsToken: Token<Principals> = token('Principals');

/** Port `PrincipalDirectory`: token → principal, read once at start (nothing to close). */
export function bindPrincipals(binder: Binder): void {
  binder.resolved(PrincipalsToken, { config: ConfigToken, log: LogToken }, ({ config, log }) => PRINCIPAL_SOURCES[principalSource(config)](config, log));
  binder.resolved(PrincipalDirectoryToken, { principals: PrincipalsToken }, ({ principals }) => principals.directory);
  binder.resolved(DemoPrincipalToken, { principals: PrincipalsToken }, ({ principals }) => principals.demo);
}
