declare const tokenBrand: unique symbol;

/**
 * A typed identifier for a port. The composition root binds adapters to tokens; everything else
 * receives its dependencies through constructors and never looks a token up.
 */
export type Token<T> = symbol & { readonly [tokenBrand]?: T };

/** Creates the token of a port. The name is only for diagnostics. */
export function token<T>(name: string): Token<T> {
  return Symbol(`toolgate:${name}`) as Token<T>;
}
