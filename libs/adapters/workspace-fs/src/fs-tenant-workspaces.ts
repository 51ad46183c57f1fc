import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TenantWorkspaces } from '@toolgate/contracts';

/**
 * A tenant name that is one plain path segment: ASCII letters, digits, `.`, `_` and `-`, at most
 * 128 characters, starting with a letter or digit. So it can neither climb out of the root (`..`,
 * `/`, `\`), nor hide (a leading dot), nor pose as an option (a leading dash), nor look like
 * another tenant's directory (Unicode look-alikes), nor carry NUL into a system call.
 */
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Each tenant's workspace as a host directory `<root>/<tenant>`, created on first use. A directory
 * once created is remembered for the life of the process (a mkdir per call would dominate the
 * cost of a fast tool); a failure is not, so the next call tries again.
 */
export class FsTenantWorkspaces implements TenantWorkspaces {
  readonly #root: string;
  readonly #ready = new Map<string, Promise<string>>();
  readonly #created = new Map<string, string>();

  /** `root` is the host directory the workspaces live under; it is made on first use if missing. */
  constructor(root: string) {
    this.#root = resolve(root);
  }

  /** The workspace path of `tenant` if this process already created it (no await needed). */
  created(tenant: string): string | undefined {
    return this.#created.get(tenant);
  }

  /** The absolute workspace path of `tenant`, after making sure it exists. */
  prepare(tenant: string): Promise<string> {
    let ready = this.#ready.get(tenant);
    if (!ready) {
      ready = this.#create(tenant);
      this.#ready.set(tenant, ready);
      // A failure is not remembered: the next call tries again.
      ready.catch(() => this.#ready.delete(tenant));
    }
    return ready;
  }

  async #create(tenant: string): Promise<string> {
    // The name is not echoed: it is the caller's text and may carry control characters or be huge.
    if (typeof tenant !== 'string' || !TENANT_NAME.test(tenant)) throw new Error('the tenant name cannot name a workspace directory');
    const path = join(this.#root, tenant);
    try {
      await mkdir(path, { recursive: true, mode: 0o750 });
    } catch (error) {
      // The system message names the host path; only its code is passed on.
      const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
      throw new Error(`the tenant workspace directory could not be made (${code})`, { cause: error });
    }
    this.#created.set(tenant, path);
    return path;
  }
}
