import type { JsonObject, Repair } from '@toolgate/contracts';
import { toolOf, type Call, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import { describeParameters, describeProblems, parametersHint } from '../schema/input-problems.js';
import { repairInput } from '../schema/input-repair.js';
import { setOwn } from '../schema/own-property.js';
import { compileSchema } from '../schema/schema-compiler.js';

/**
 * Gate 6: the arguments satisfy the tool's input schema, after dropping unknown arguments (only
 * if the manifest says `ignoreUnknownArgs`) and, if they do not, after the schema-driven repair.
 * From here on the call carries the repaired arguments: approvals, audit digests and the
 * handler all see the same ones. It needs nothing but the call (schemas are compiled once, cached).
 */
export function inputGate(): CallGate {
  return {
    name: 'input',
    check(call) {
      const manifest = toolOf(call).manifest;
      const validate = compileSchema(manifest.input);
      const repairs: Repair[] = [];
      const args = manifest.ignoreUnknownArgs ? dropUnknown(manifest.input['properties'], call.args, repairs) : call.args;
      if (validate(args)) return accept(call, args, repairs);

      const repaired = repairInput(manifest.input, args);
      if (repaired.repairs.length > 0 && validate(repaired.args)) return accept(call, repaired.args, [...repairs, ...repaired.repairs]);

      const problems = describeProblems(validate.errors);
      const parameters = describeParameters(manifest.input);
      return deny(
        'input',
        'INVALID_INPUT',
        `Invalid arguments for '${manifest.name}': ${problems.join('; ')}.`,
        parametersHint(parameters),
        { problems, parameters, attemptedRepairs: repaired.repairs.map((r) => r.detail) },
      );
    },
  };
}

function accept(call: Call, args: JsonObject, repairs: Repair[]): undefined {
  call.args = args;
  call.repaired = repairs;
  call.inputAccepted = true;
  return undefined;
}

/** Unknown top-level arguments are removed, never passed on, and each removal is reported. */
function dropUnknown(properties: unknown, args: JsonObject, repairs: Repair[]): JsonObject {
  const known = typeof properties === 'object' && properties !== null ? properties : {};
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(args)) {
    if (Object.hasOwn(known, key)) setOwn(kept, key, value);
    else repairs.push({ kind: 'drop', path: `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, detail: `dropped unknown argument '${key.slice(0, 64)}'` });
  }
  return repairs.length > 0 ? kept : args;
}
