// Module resolution hook of the `tally` command when it runs from the TypeScript sources: adds the
// `@tally/source` export condition, as `node --conditions=@tally/source` would, so that the workspace packages
// resolve to their src/ rather than their compiled dist/.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@tally/source'] });
}
