// What citty's argument definitions cannot say about a command's positional arguments: whether it
// takes any number of them (`svc purge <url>…`, `svc ban field=value…`), and which words they may be,
// for shell completion (`svc completion <TAB>` offers the shells). Commands declare it next to their
// definition with `withPositionals`; the argument check and the completion generator read it.
export interface PositionalRules {
  /** More positional arguments than the definition names are accepted (the rest land in `args._`). */
  variadic?: boolean;
  /** Words completion offers for a positional argument; a word ending in `=` is completed without a space. */
  values?: readonly string[];
}

const rules = new WeakMap<object, PositionalRules>();

/** `command` is a citty command definition (typed loosely: each one is generic over its own args). */
export function withPositionals(command: object, positionals: PositionalRules): void {
  rules.set(command, positionals);
}

export function positionalRules(command: object): PositionalRules {
  return rules.get(command) ?? {};
}
