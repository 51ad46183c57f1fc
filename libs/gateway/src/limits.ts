/** Size and time bounds the gateway enforces on every call. */
export interface GatewayLimits {
  /** Largest serialized arguments (UTF-8 bytes of their JSON). Default 64 KiB. */
  readonly maxArgsBytes: number;
  /** Largest serialized output (UTF-8 bytes), unless the manifest sets its own. Default 1 MiB. */
  readonly maxOutputBytes: number;
  /** How long an approval request stays decidable and usable. Default 15 minutes. */
  readonly approvalTtlMs: number;
  /**
   * How long a call to a tool seen for the first time waits for its pin to be durable before it
   * is refused (ADR 0060: never served unpinned). Default 5 seconds.
   */
  readonly pinWaitMs: number;
}

export const DEFAULT_LIMITS: GatewayLimits = {
  maxArgsBytes: 64 * 1024,
  maxOutputBytes: 1024 * 1024,
  approvalTtlMs: 15 * 60 * 1000,
  pinWaitMs: 5000,
};
