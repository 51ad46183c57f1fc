import { Buffer } from 'node:buffer';
import type { JsonValue } from '@toolgate/contracts';
import { toolOf, type Call, type Execution } from '../call.js';
import { deny } from '../denials/deny.js';
import type { GatewayLimits } from '../limits.js';
import { describeProblems } from '../schema/input-problems.js';
import { compileSchema } from '../schema/schema-compiler.js';

/** What the output step reads: the gateway's output limit (a manifest may set its own). */
export type OutputNeeds = Pick<GatewayLimits, 'maxOutputBytes'>;

/**
 * Gate 11: the output fits the size limit (the manifest's, else the gateway's) and its declared
 * schema. The caller receives the JSON round trip of what was checked, so what it gets is
 * exactly what was validated (no class instances, no `undefined` holes).
 */
export function checkOutput(call: Call, needs: OutputNeeds, output: JsonValue): Execution {
  call.gate = 'output';
  const manifest = toolOf(call).manifest;
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch {
    json = undefined;
  }
  if (json === undefined) {
    return { ok: false, failed: true, denial: deny('output', 'INVALID_OUTPUT', `'${manifest.name}' returned a value that is not JSON.`) };
  }
  const limit = manifest.maxOutputBytes ?? needs.maxOutputBytes;
  const bytes = json.length * 3 <= limit ? json.length : Buffer.byteLength(json, 'utf8');
  if (bytes > limit) {
    return {
      ok: false,
      failed: true,
      denial: deny('output', 'OUTPUT_TOO_LARGE', `'${manifest.name}' returned ${bytes} bytes; the limit is ${limit}.`, 'Ask for less, e.g. a narrower query or a smaller page.', {
        bytes,
        limit,
      }),
    };
  }
  const checked = JSON.parse(json) as JsonValue;
  const validate = compileSchema(manifest.output);
  if (!validate(checked)) {
    const problems = describeProblems(validate.errors, 'field');
    return {
      ok: false,
      failed: true,
      denial: deny('output', 'INVALID_OUTPUT', `'${manifest.name}' returned output that does not match its declared schema: ${problems.join('; ')}.`, 'This is a defect of the tool; an operator should report it.', { problems }),
    };
  }
  return { ok: true, output: checked };
}
