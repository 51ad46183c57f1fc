import type { JsonObject, Repair, ToolManifest } from '@toolgate/contracts';
import { toolOf, type Call, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import { describeParameters, describeProblems, parametersHint } from '../schema/input-problems.js';
import { clampsArguments, displayPath, repairInput, type WithheldClamp } from '../schema/input-repair.js';
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

      const repaired = repairInput(manifest.input, args, { clamp: clampsArguments(manifest) });
      if (repaired.repairs.length > 0 && validate(repaired.args)) return accept(call, repaired.args, [...repairs, ...repaired.repairs]);
      const withheld = repaired.withheld;
      // A number left beyond its bound is named as the repair left it ('count' must be <= 10),
      // not as it was sent (a numeric string is not "must be integer" once it was coerced).
      if (withheld.length > 0) validate(repaired.args);

      const problems = describeProblems(validate.errors);
      const parameters = describeParameters(manifest.input);
      return deny(
        'input',
        'INVALID_INPUT',
        `Invalid arguments for '${manifest.name}': ${problems.join('; ')}.${withheld.length > 0 ? ` ${notClamped(manifest, withheld)}` : ''}${
          repaired.inexact.length > 0 ? ` ${inexactNumbers(repaired.inexact)}` : ''
        }`,
        parametersHint(parameters),
        {
          problems,
          parameters,
          attemptedRepairs: repaired.repairs.map((r) => r.detail),
          ...(withheld.length > 0 ? { notClamped: withheld.map((w) => ({ path: w.path, bound: w.bound, limit: w.limit })) } : {}),
          ...(repaired.inexact.length > 0 ? { inexactNumbers: repaired.inexact.slice(0, 20) } : {}),
        },
      );
    },
  };
}

/**
 * Why a number beyond its bound was refused rather than moved to the bound (ADR 0063): the bound,
 * and that the risk level is the reason. Names arguments and bounds, never the values sent.
 */
function notClamped(manifest: ToolManifest, withheld: readonly WithheldClamp[]): string {
  const bounds = withheld.slice(0, 5).map((w) => `'${displayPath(w.path)}' must be ${w.bound === 'maximum' ? 'at most' : 'at least'} ${w.limit}`);
  const more = withheld.length > 5 ? `, and ${withheld.length - 5} more` : '';
  const why =
    manifest.risk === 'high' || manifest.risk === 'critical'
      ? `Toolgate does not clamp the arguments of ${manifest.risk}-risk tools, since that would change what an approved call does`
      : "this tool's manifest turns clamping off";
  return `${bounds.join('; ')}${more}: ${why}; send values within the bounds.`;
}

/**
 * Why a numeric string was not converted: a number cannot hold its value exactly, and rounding it
 * would change what the call does. Names the arguments (at most five, each cut short), never the values.
 */
function inexactNumbers(paths: readonly string[]): string {
  const names = paths.slice(0, 5).map((p) => `'${displayPath(p).slice(0, 64)}'`);
  const more = paths.length > 5 ? `, and ${paths.length - 5} more` : '';
  const verb = paths.length === 1 ? 'is a numeric string' : 'are numeric strings';
  return `${names.join(', ')}${more} ${verb} that no number holds exactly (a number keeps about 15 to 17 significant digits); Toolgate does not round arguments, so send a value a number holds exactly.`;
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
