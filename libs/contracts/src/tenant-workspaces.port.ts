import { token, type Token } from './token.js';

/**
 * Each tenant's working directory on the host, the one a tool's `workspace` permission names.
 * The gateway asks for it before a call runs; where and how the directory is made is the
 * adapter's business, so the core never touches the file system itself.
 */
export interface TenantWorkspaces {
  /**
   * The sync fast path: the absolute workspace path of `tenant` if this process already prepared
   * it, otherwise `undefined`. It never creates anything, throws or waits, so a call whose
   * workspace is known skips an await; `undefined` only means "call `prepare`", never "refused".
   */
  created(tenant: string): string | undefined;
  /**
   * The absolute workspace path of `tenant`, after making sure the directory exists. Rejects when
   * the tenant name cannot safely name a directory (it could leave the root) or the directory
   * cannot be made; the caller must then refuse the call (fail closed). The rejection's message
   * names neither the host path nor the whole tenant name. A failure is not remembered: the next
   * call tries again. Concurrent calls for one tenant share one attempt.
   */
  prepare(tenant: string): Promise<string>;
}
/** The tenant workspaces `apps/server` binds under `TOOLGATE_WORKSPACE_ROOT`. */
export const TenantWorkspacesToken: Token<TenantWorkspaces> = token('TenantWorkspaces');
