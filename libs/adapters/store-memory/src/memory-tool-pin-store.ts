import type { ToolPin, ToolPinStore } from '@toolgate/contracts';
import { checkToolPin, isPinnableToolName, requirePinDigest } from '@toolgate/adapter-kit-store';

/**
 * Tool pins in a map, for tests and single-process experiments. Every method checks and writes
 * without awaiting in between, so each check-and-set is atomic on Node's single thread. Pins are
 * lost when the process exits.
 */
export class MemoryToolPinStore implements ToolPinStore {
  readonly #pins = new Map<string, ToolPin>();

  async list(): Promise<readonly ToolPin[]> {
    // Names are ASCII (the kit's rule), so code-unit order is the SQL stores' byte order.
    return [...this.#pins.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)).map(copy);
  }

  async get(tool: string): Promise<ToolPin | undefined> {
    if (!isPinnableToolName(tool)) return undefined;
    const pin = this.#pins.get(tool);
    return pin ? copy(pin) : undefined;
  }

  async pinFirst(pin: ToolPin): Promise<ToolPin> {
    const checked = checkToolPin(pin);
    const first = this.#pins.get(checked.tool);
    if (first) return copy(first);
    this.#pins.set(checked.tool, checked);
    return copy(checked);
  }

  async replace(expectedDigest: string | undefined, pin: ToolPin): Promise<boolean> {
    if (expectedDigest !== undefined) requirePinDigest('expectedDigest', expectedDigest);
    const checked = checkToolPin(pin);
    const current = this.#pins.get(checked.tool);
    if (current?.digest !== expectedDigest) return false;
    this.#pins.set(checked.tool, checked);
    return true;
  }
}

function copy(pin: ToolPin): ToolPin {
  return { ...pin };
}
