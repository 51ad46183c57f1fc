import { initTRPC, TRPCError } from '@trpc/server';
import type { Principal } from '@toolgate/contracts';
import type { ApiContext } from './context.js';

/** Formats zod issues as `path: message` lines, so a client sees which field is wrong and why. */
function issueLines(cause: unknown): string[] | undefined {
  const issues = (cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}

const t = initTRPC.context<ApiContext>().create({
  // Stack traces are never sent, whatever NODE_ENV says: they hold host paths.
  isDev: false,
  errorFormatter({ shape, error }) {
    const issues = error.code === 'BAD_REQUEST' ? issueLines(error.cause) : undefined;
    return {
      ...shape,
      message: issues ? `invalid request: ${issues.join('; ')}` : shape.message,
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, ...(issues ? { issues } : {}) },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** Procedures that need a caller; the principal is non-optional inside them. */
export const authedProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.principal) {
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'missing or invalid bearer token' });
  }
  return next({ ctx: { principal: ctx.principal as Principal } });
});
