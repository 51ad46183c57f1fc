import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@toolgate/api';

export type ToolgateClient = ReturnType<typeof createToolgateClient>;

/** The formats `tools.list` answers in (ADR 0053), as the router's input type says. */
export type ToolsListFormat = Exclude<inferRouterInputs<AppRouter>['tools']['list'], void | undefined>['format'];
/** What `tools.list` answers when given a format. */
export type ToolsExport = Exclude<inferRouterOutputs<AppRouter>['tools']['list'], readonly unknown[]>;

/**
 * The formats, for `--format`'s choices. Only types cross from the server side, so the list is
 * written here; the two checks below fail the build if it and the router's ever differ.
 */
export const EXPORT_FORMATS = ['openai', 'anthropic', 'mcp', 'toolgate'] as const satisfies readonly ToolsListFormat[];
type Missing = Exclude<ToolsListFormat, (typeof EXPORT_FORMATS)[number]>;
export const EXPORT_FORMATS_COMPLETE: [Missing] extends [never] ? true : Missing = true;

/** A typed tRPC client of the server; only the router's type crosses from the server side. */
export function createToolgateClient(options: { url: string; token?: string }) {
  const base = options.url.replace(/\/+$/, '');
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${base}/trpc`,
        headers: () => (options.token ? { authorization: `Bearer ${options.token}` } : {}),
      }),
    ],
  });
}

/** A one-line explanation of a failed request, for humans. */
export function describeClientError(error: unknown, url: string): string {
  if (error instanceof TRPCClientError) {
    const cause = (error as TRPCClientError<AppRouter>).cause as { code?: string } | undefined;
    if (cause?.code === 'ECONNREFUSED' || /fetch failed/i.test(error.message)) {
      return `cannot reach the server at ${url} (is it running? set --url or TOOLGATE_URL)`;
    }
    const code = (error.data as { code?: string } | undefined)?.code;
    if (code === 'UNAUTHORIZED') return `unauthorized: ${error.message} (set --token or TOOLGATE_TOKEN)`;
    if (code === 'SERVICE_UNAVAILABLE') return `unavailable: ${error.message}`;
    return code ? `${code}: ${error.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
