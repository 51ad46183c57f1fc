import { initTRPC, TRPCError } from '@trpc/server';
import { allowsScope, type Principal, type ToolgateScope } from '@toolgate/contracts';
import type { ApiContext } from './context.js';
import { argsProblem, inputProblem } from './input-bounds.js';

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
export const authedProcedure = t.procedure
  .use(async ({ ctx, next }) => {
    // tRPC creates one context per HTTP request, shared by the calls of a batch.
    const turn = takeTurn(ctx);
    if (turn) await turn;
    if (!ctx.principal) {
      const problem = ctx.credentialProblem;
      if (problem?.outcome === 'unavailable') throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `cannot check the bearer token now: ${problem.reason}; try again shortly` });
      throw new TRPCError({ code: 'UNAUTHORIZED', message: problem ? `invalid bearer token: ${problem.reason}` : 'missing bearer token' });
    }
    return next({ ctx: { principal: ctx.principal as Principal } });
  })
  // Before any input parser: every procedure's input is refused whole if it nests too deep or
  // holds more values than any valid input could, whichever field holds them, so no validator
  // or handler ever recurses over it or spends per-value work on it (each call of a batch alike).
  .use(async ({ getRawInput, next }) => {
    const raw = await getRawInput();
    const args = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as { args?: unknown }).args : undefined;
    const argsRefusal = args === undefined ? undefined : argsProblem(args);
    if (argsRefusal) throw refusal(['args'], argsRefusal);
    const inputRefusal = inputProblem(raw);
    if (inputRefusal) throw refusal([], inputRefusal);
    return next();
  });

/** The cause of a FORBIDDEN for a token without the call's scope: the faces answer it with `insufficient_scope`. */
export class InsufficientScopeError extends Error {
  override readonly name = 'InsufficientScopeError';
  constructor(readonly scope: ToolgateScope) {
    super(`insufficient scope: this call needs a token with the scope '${scope}'`);
  }
}

/**
 * An authed procedure whose token must carry `scope` when scopes are checked (ADR 0075). Checked
 * after authentication and before the input is parsed, so a token without it learns nothing else.
 */
export function scopedProcedure(scope: ToolgateScope) {
  return authedProcedure.use(({ ctx, next }) => {
    if (!allowsScope(ctx.principal, scope)) {
      const cause = new InsufficientScopeError(scope);
      throw new TRPCError({ code: 'FORBIDDEN', message: cause.message, cause });
    }
    return next();
  });
}

const turns = new WeakMap<object, Promise<void>>();

/**
 * The calls of one tRPC batch would otherwise run back to back within one turn of the event
 * loop; with up to 64 KiB of arguments each, a batch of 32 would hold the loop for all of their
 * validation. Each call after the first of a request starts one turn after the one before it, so
 * other callers' requests run in between. The first call (every single call) waits for nothing,
 * and separate requests never wait for each other. Returns undefined when there is nothing to wait for.
 */
function takeTurn(request: object): Promise<void> | undefined {
  const previous = turns.get(request);
  const mine = previous ? previous.then(() => new Promise<void>((resolve) => setImmediate(resolve))) : Promise.resolve();
  turns.set(request, mine);
  return previous ? mine : undefined;
}

/** A refusal worded like a schema issue, so REST and tRPC callers read it as any other bad field. */
function refusal(path: string[], message: string): TRPCError {
  return new TRPCError({ code: 'BAD_REQUEST', message, cause: Object.assign(new Error(message), { issues: [{ path, message }] }) });
}
