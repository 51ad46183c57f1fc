import { Container } from 'inversify';
import type { Token } from '@toolgate/contracts';
import type { Log } from '../logger.js';

/** What a factory needs, by name: each key names a token, and the factory gets its value under that key. */
export type Needs = Readonly<Record<string, Token<unknown>>>;

/** The values of the tokens a {@link Needs} names, under the same keys. */
export type Resolved<N extends Needs> = { readonly [K in keyof N]: N[K] extends Token<infer T> ? T : never };

/** Builds the object a factory receives from the values the container resolved, in `keys` order. */
export function namedValues(keys: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key, i) => [key, values[i]]));
}

/**
 * The composition root's container, with the two things inversify does not give it:
 *
 * - Factories name their dependencies as an object of tokens (`{ config: ConfigToken }`) and
 *   receive an object of values: the types check each name, where a positional token list
 *   beside a parameter list does not (a `Token` is a `symbol`, which inversify accepts for any type).
 * - Closing runs each binding's deactivation newest first. Inversify's `unbindAllAsync` runs
 *   every deactivation at once, in binding order, and rejects as soon as it meets a singleton
 *   whose factory failed (8.2.3 caches the rejected promise), so it is not used.
 *
 * Only `apps/server` sees this class; the libs never get a container (ADR 0003, ADR 0036).
 */
export class Binder {
  readonly #container = new Container({ defaultScope: 'Singleton' });
  /** Tokens whose value was made, oldest first: the order closing reverses. */
  readonly #made: Token<unknown>[] = [];

  /** Binds a value that exists before the container (the configuration, the log). */
  constant<T>(token: Token<T>, value: T): void {
    this.#container.bind<T>(token).toConstantValue(value);
  }

  /**
   * Binds `token` to what `create` makes of the values `needs` names. It runs once, the first
   * time the token is resolved, and may be async; the returned syntax lets a binding module say
   * how the value closes (`.onDeactivation((x) => x.close())`), beside how it opens.
   */
  resolved<T, N extends Needs>(token: Token<T>, needs: N, create: (deps: Resolved<N>) => T | Promise<T>) {
    const keys = Object.keys(needs);
    return this.#container.bind<T>(token).toResolvedValue(
      (...values: unknown[]) => this.#record(token, create(namedValues(keys, values) as Resolved<N>)),
      keys.map((key) => needs[key]!),
    );
  }

  /**
   * Binds `token` to what `create` makes of the values of `tokens`, in that order: for a binding
   * whose dependencies are only known from a list (the tool list names them per entry).
   */
  resolvedFromList<T>(token: Token<T>, tokens: readonly Token<unknown>[], create: (values: readonly unknown[]) => T | Promise<T>) {
    return this.#container.bind<T>(token).toResolvedValue((...values: unknown[]) => this.#record(token, create(values)), [...tokens]);
  }

  /** The value of `token`, made (with everything it needs) if it was not yet. */
  get<T>(token: Token<T>): Promise<T> {
    return this.#container.getAsync<T>(token);
  }

  /**
   * Unbinds every value that was made, newest first, so each one's deactivation (its `close`)
   * runs after everything made from it or after it has closed. A close that fails is logged and
   * the rest still close. Values never made, or whose factory failed, have nothing to close.
   */
  async close(log: Log): Promise<void> {
    for (const token of this.#made.splice(0).reverse()) {
      await this.#container.unbindAsync(token).catch((error: unknown) => log('warn', `closing failed: ${(error as Error).message}`));
    }
  }

  #record<T>(token: Token<T>, made: T | Promise<T>): T | Promise<T> {
    if (made instanceof Promise) {
      return made.then((value: T) => {
        this.#made.push(token);
        return value;
      });
    }
    this.#made.push(token);
    return made;
  }
}
