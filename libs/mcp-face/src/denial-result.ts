import type { Denial, InvokeResult, JsonValue } from '@toolgate/contracts';

/** An MCP `CallToolResult` as this face builds it. */
export interface ToolCallResult {
  readonly content: { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly [key: string]: unknown;
}

function delegatesOf(denial: Denial): readonly string[] {
  const delegates = denial.data?.['delegates'];
  return Array.isArray(delegates) ? delegates.filter((d): d is string => typeof d === 'string') : [];
}

/**
 * The gateway's hints name the tRPC procedures (`tools.list`, `tools.invoke`); a model talking
 * MCP can only follow the MCP methods that do the same, so those names are said in MCP's words.
 */
const MCP_METHODS: readonly (readonly [RegExp, string])[] = [
  [/\btools\.list\b/g, 'tools/list'],
  [/\btools\.invoke\b/g, 'tools/call'],
];

/** A gateway hint in MCP's words (see {@link MCP_METHODS}); anything else in it is left as written. */
export function mcpHint(hint: string): string {
  return MCP_METHODS.reduce((text, [name, method]) => text.replace(name, method), hint);
}

/**
 * The text a model reads when Toolgate refuses a call: which gate, the stable code, the sentence
 * the gate wrote and what to do about it. A `TOOL_NOT_ALLOWED` names whom to delegate to, since
 * retrying cannot succeed.
 */
export function denialText(denial: Denial, callId: string): string {
  const lines = [`Toolgate refused this call at the ${denial.gate} gate: ${denial.code}.`, denial.message];
  if (denial.hint) lines.push(`Hint: ${mcpHint(denial.hint)}`);
  if (denial.code === 'TOOL_NOT_ALLOWED') {
    const delegates = delegatesOf(denial);
    lines.push(
      delegates.length > 0
        ? `You may not call this tool; delegate the task to one of: ${delegates.join(', ')}.`
        : 'You may not call this tool, and no principal of your tenant may; do not retry.',
    );
  }
  lines.push(`Call id: ${callId}.`);
  return lines.join('\n');
}

/**
 * A denial as an MCP tool error (`isError: true`), not a JSON-RPC error: the model sees it and
 * can act on it. `structuredContent` carries the same denial as the REST and tRPC faces, its
 * hint in MCP's words as in the text.
 */
export function denialResult(callId: string, denial: Denial): ToolCallResult {
  const shown: Denial = denial.hint === undefined ? denial : { ...denial, hint: mcpHint(denial.hint) };
  return {
    content: [{ type: 'text', text: denialText(denial, callId) }],
    structuredContent: { ok: false, callId, denial: shown as unknown as Record<string, JsonValue> },
    isError: true,
  };
}

/** A successful call: the output as `structuredContent` and as a JSON text block for clients that read only text. */
export function successResult(output: JsonValue): ToolCallResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(output) }],
    structuredContent: output as Record<string, unknown>,
  };
}

/** The MCP result of a gateway result. */
export function toCallToolResult(result: InvokeResult): ToolCallResult {
  return result.ok ? successResult(result.output) : denialResult(result.callId, result.denial);
}
