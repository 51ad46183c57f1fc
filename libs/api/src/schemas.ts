import { z } from 'zod';
import type { JsonObject } from '@toolgate/contracts';
import { TOOL_EXPORT_FORMATS } from '@toolgate/gateway';
import { argsProblem } from './input-bounds.js';

const toolName = z.string().min(1).max(128).regex(/^[a-z][a-z0-9_]*$/, 'tool names are lowercase snake_case');
const version = z.string().min(1).max(64);
// One iterative walk checks depth, count, size and JSON-ness; no per-value zod schema runs, because
// `z.json()` cost about 3 µs a value (a second per MiB of small values) and recursed once per level.
const args = z.custom<JsonObject>().superRefine((value, ctx) => {
  const problem = argsProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
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

/**
 * `tools.list`'s optional input: the format to answer in (ADR 0053). Absent, the answer is the
 * manifests as before; an unknown format is refused naming the accepted ones.
 */
export const toolsListInput = z
  .strictObject({
    format: z.enum(TOOL_EXPORT_FORMATS, { error: () => `must be one of ${TOOL_EXPORT_FORMATS.join(', ')}` }),
  })
  .optional();

/**
 * `tools.accept`'s input: the tool, and the digest of the changed definition the operator looked
 * at (as `tools.held` shows it), so a definition that changed again since is not accepted unseen.
 */
export const toolAcceptInput = z.strictObject({
  tool: toolName,
  // One anchored pattern that fails by the 72nd character, whatever the length; the message never echoes what was sent.
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be 'sha256:' and 64 lowercase hex digits, as `tools held` shows it"),
});

export const approvalRequestInput = z.strictObject({ tool: toolName, version: version.optional(), args: args.default({}) });

export const approvalListInput = z
  .strictObject({
    status: z.enum(['pending', 'approved', 'denied', 'consumed']).optional(),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .default({ limit: 50 });

/** One approval by id: ids are bounded as everywhere else, so a long one is refused before any lookup. */
export const approvalGetInput = z.strictObject({ id: z.string().min(1).max(128) });

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
