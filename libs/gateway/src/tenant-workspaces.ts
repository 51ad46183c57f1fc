import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Each tenant's workspace directory, `<root>/<tenant>`, created on first use. A directory once
 * created is remembered for the life of the process (a mkdir per call would dominate the cost of
 * a fast tool); a tenant name that could leave the root is refused.
 */
export class TenantWorkspaces {
  readonly #ready = new Map<string, Promise<string>>();
  readonly #created = new Map<string, string>();

  constructor(private readonly root: string) {}

  /** The workspace path of `tenant` if it was already created by this process (no await needed). */
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
    if (!TENANT_NAME.test(tenant)) throw new Error(`tenant name '${tenant.slice(0, 64)}' cannot name a directory`);
    const path = join(this.root, tenant);
    await mkdir(path, { recursive: true, mode: 0o750 });
    this.#created.set(tenant, path);
    return path;
  }
}
