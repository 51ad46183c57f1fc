import { TRPCError } from '@trpc/server';
import { GatewayError } from '@toolgate/gateway';

const codes = {
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  INVALID: 'BAD_REQUEST',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
} as const;

/**
 * Runs a gateway operation and turns its `GatewayError`s into tRPC errors with the same message.
 * Anything else is a bug: it becomes a generic 500 whose message leaks nothing.
 */
export async function mapGatewayErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof TRPCError) throw error;
    if (error instanceof GatewayError) {
      throw new TRPCError({ code: codes[error.code], message: error.message });
    }
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'internal error', cause: error });
  }
}
