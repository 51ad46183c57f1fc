import type { AppRouter, HealthReport } from '@toolgate/api';
import { token, type Token } from '@toolgate/contracts';
import type { Gateway, ToolRegistry } from '@toolgate/gateway';
import type { ServerConfig } from './config.js';
import type { Log } from './logger.js';

/** Tokens of things only the composition root knows about (the ports' tokens live in contracts). */
export const ConfigToken: Token<ServerConfig> = token('ServerConfig');
export const LogToken: Token<Log> = token('Log');
export const ToolRegistryToken: Token<ToolRegistry> = token('ToolRegistry');
export const GatewayToken: Token<Gateway> = token('Gateway');
export const HealthToken: Token<() => HealthReport> = token('Health');
export const AppRouterToken: Token<AppRouter> = token('AppRouter');
