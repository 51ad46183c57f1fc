import { ToolError, type JsonObject, type Permission } from '@toolgate/contracts';

/** What every workspace file tool needs: the tenant's workspace, nothing else. */
export const WORKSPACE_PERMISSION: readonly Permission[] = [{ type: 'filesystem', scope: 'workspace' }];

/** A string argument; the gateway has validated the schema, this guards direct callers. */
export function stringArg(args: JsonObject, name: string, fallback?: string): string {
  const value = args[name] ?? fallback;
  if (typeof value !== 'string') throw new ToolError(`'${name}' must be a string`, 'INVALID_ARGUMENT');
  return value;
}

export function optionalStringArg(args: JsonObject, name: string): string | undefined {
  return args[name] === undefined ? undefined : stringArg(args, name);
}

export function integerArg(args: JsonObject, name: string, fallback: number, min: number, max: number): number {
  const value = args[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolError(`'${name}' must be an integer from ${min} to ${max}`, 'INVALID_ARGUMENT');
  }
  return value;
}

export function booleanArg(args: JsonObject, name: string, fallback: boolean): boolean {
  const value = args[name] ?? fallback;
  if (typeof value !== 'boolean') throw new ToolError(`'${name}' must be true or false`, 'INVALID_ARGUMENT');
  return value;
}
