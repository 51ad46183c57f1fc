import { z } from 'zod';
import { MAX_ARGS_DEPTH, nestedWithin } from '@toolgate/gateway';

const toolName = z.string().min(1).max(128).regex(/^[a-z][a-z0-9_]*$/, 'tool names are lowercase snake_case');
const version = z.string().min(1).max(64);
// The depth check comes first and stops the pipe: `z.json()` recurses once per level.
const args = z
  .custom<unknown>((value) => nestedWithin(value, MAX_ARGS_DEPTH), `arguments are nested deeper than ${MAX_ARGS_DEPTH} levels`)
  .pipe(z.record(z.string(), z.json()));
const grant = z.strictObject({ type: z.string().min(1).max(32), scope: z.string().min(1).max(256) });

export const invokeInput = z.strictObject({
  tool: toolName,
  version: version.optional(),
  args: args.default({}),
  grants: z.array(grant).max(32).optional(),
  approvalId: z.string().min(1).max(128).optional(),
  /** The caller approves its own call; honoured only for holders of the `approver` role. */
  approved: z.boolean().optional(),
});
export type InvokeInput = z.infer<typeof invokeInput>;

export const explainInput = invokeInput;

export const approvalRequestInput = z.strictObject({ tool: toolName, version: version.optional(), args: args.default({}) });

export const approvalListInput = z
  .strictObject({
    status: z.enum(['pending', 'approved', 'denied', 'consumed']).optional(),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .default({ limit: 50 });

export const approvalDecideInput = z.strictObject({
  id: z.string().min(1).max(128),
  approve: z.boolean(),
  reason: z.string().max(1000).optional(),
});

export const egressSetInput = z.strictObject({
  enabled: z.boolean(),
  allowAny: z.boolean().default(false),
  hosts: z.array(z.string().min(1).max(253)).max(1000).default([]),
});

export const egressAllowInput = z.strictObject({ host: z.string().min(1).max(253) });

export const auditTailInput = z
  .strictObject({
    limit: z.number().int().min(1).max(1000).default(50),
    afterSeq: z.number().int().min(0).optional(),
  })
  .default({ limit: 50 });
