#!/usr/bin/env node
// Runs the TypeScript CLI directly: the repository ships sources, not a build.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
