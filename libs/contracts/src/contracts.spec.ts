import { describe, expect, it } from 'vitest';
import { EgressDeniedError, PathEscapeError, ToolAbortedError, ToolError } from './errors.js';
import { GATES } from './invocation.js';
import { SEARCH_FAILURE_REASONS } from './search-provider.port.js';
import { token } from './token.js';

describe('token', () => {
  it('gives every port its own identity, even for equal names', () => {
    expect(token('AuditSink')).not.toBe(token('AuditSink'));
    expect(token('AuditSink').description).toBe('toolgate:AuditSink');
  });
});

describe('search failure reasons', () => {
  it('keep the spellings docs/tools.md promises agents', () => {
    expect(SEARCH_FAILURE_REASONS).toEqual({
      rateLimited: 'PROVIDER_RATE_LIMITED',
      unavailable: 'PROVIDER_UNAVAILABLE',
      refused: 'PROVIDER_REFUSED',
      badResponse: 'PROVIDER_BAD_RESPONSE',
      noResults: 'NO_RESULTS',
    });
  });
});

describe('tool errors', () => {
  it('carry a caller-readable message and a stable reason', () => {
    const error = new ToolError('quota exceeded', 'PROVIDER_RATE_LIMITED');
    expect(error).toBeInstanceOf(Error);
    expect(error.reason).toBe('PROVIDER_RATE_LIMITED');
    expect(new ToolError('x').reason).toBe('TOOL_ERROR');
  });

  it('name the path as given in a PathEscape, never a resolved one', () => {
    const error = new PathEscapeError('../etc/passwd', 'leaves the workspace');
    expect(error).toBeInstanceOf(ToolError);
    expect(error.message).toBe("PathEscape: '../etc/passwd' leaves the workspace");
    expect(error.reason).toBe('PATH_ESCAPE');
  });

  it('distinguish policy refusals and aborts from other failures', () => {
    expect(new EgressDeniedError('169.254.169.254', 'link-local address').reason).toBe('EGRESS_DENIED');
    expect(new ToolAbortedError().reason).toBe('ABORTED');
  });
});

describe('gate order', () => {
  it('lists the gates in the order the pipeline runs them', () => {
    expect(GATES).toEqual([
      'authenticate', 'lookup', 'allow', 'budget', 'size', 'permissions', 'input', 'approval', 'egress', 'audit', 'execute', 'output',
    ]);
  });
});
