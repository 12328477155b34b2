// The QuickJS engine's set-up, run once per VM before any script, with the `redis` object the
// engine built. It returns the helpers the engine keeps, and leaves the realm locked:
// - no code generation at run time: `eval` is gone, and the Function constructors (plain,
//   generator, async, async generator) throw;
// - every object reachable from the global object, and the intrinsics reachable only through
//   values (iterator prototypes, %TypedArray%, generator prototypes ...), is frozen, and so is
//   the global object itself: a script can neither leave state for the next one nor change what
//   another script sees (scripts run in strict mode, so such writes throw).
(function (redis) {
  'use strict';
  const { freeze, isFrozen, getPrototypeOf, getOwnPropertyNames, getOwnPropertySymbols,
    getOwnPropertyDescriptor, defineProperty } = Object;
  const mapForEach = Map.prototype.forEach;
  const setForEach = Set.prototype.forEach;
  const mapSet = Map.prototype.set;
  const setAdd = Set.prototype.add;

  // The Function constructors compile new code: replaced by throwers that keep `instanceof`.
  const refuse = (what) => {
    const f = function () {
      throw new TypeError(what + ' is not allowed in scripts (no code generation at run time)');
    };
    return f;
  };
  const constructors = [
    ['Function', Function.prototype],
    ['GeneratorFunction', getPrototypeOf(function* () {})],
    ['AsyncFunction', getPrototypeOf(async function () {})],
    ['AsyncGeneratorFunction', getPrototypeOf(async function* () {})],
  ];
  for (const [name, proto] of constructors) {
    const thrower = refuse(name);
    defineProperty(thrower, 'prototype', { value: proto, writable: false });
    defineProperty(proto, 'constructor', { value: thrower, writable: false, configurable: false });
    if (name === 'Function') {
      defineProperty(globalThis, 'Function', { value: thrower, writable: false, configurable: false });
    }
  }
  delete globalThis.eval;

  defineProperty(globalThis, 'redis', { value: redis, enumerable: false });

  // Intrinsics that no global names.
  const hidden = [
    getPrototypeOf(function* () {}).prototype,
    getPrototypeOf(async function* () {}).prototype,
    getPrototypeOf([][Symbol.iterator]()),
    getPrototypeOf(getPrototypeOf([][Symbol.iterator]())),
    getPrototypeOf(new Map()[Symbol.iterator]()),
    getPrototypeOf(new Set()[Symbol.iterator]()),
    getPrototypeOf(''[Symbol.iterator]()),
    getPrototypeOf(/a/[Symbol.matchAll]('')),
    getPrototypeOf(Int8Array),
    getOwnPropertyDescriptor(Function.prototype, 'caller')?.get,
  ];
  try { hidden.push(getPrototypeOf([].values().map((x) => x))); } catch (e) { /* no helpers */ }
  try { hidden.push(getPrototypeOf(Iterator.from({ next() { return { done: true }; } }))); } catch (e) { /* none */ }
  try { hidden.push(getPrototypeOf(getPrototypeOf(getPrototypeOf((async function* () {})())))); } catch (e) { /* none */ }

  const seen = new Set();
  const deepFreeze = (root) => {
    const todo = [root];
    while (todo.length > 0) {
      const v = todo.pop();
      if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) {
        continue;
      }
      seen.add(v);
      freeze(v);
      todo.push(getPrototypeOf(v));
      for (const key of [...getOwnPropertyNames(v), ...getOwnPropertySymbols(v)]) {
        const d = getOwnPropertyDescriptor(v, key);
        if (d === undefined) continue;
        if ('value' in d) todo.push(d.value);
        if (d.get) todo.push(d.get);
        if (d.set) todo.push(d.set);
      }
    }
  };
  for (const h of hidden) deepFreeze(h);
  deepFreeze(globalThis);

  // What the engine calls from Rust: flattening JS Maps and Sets for replies.
  const helpers = {
    mapEntries(m) {
      const out = [];
      mapForEach.call(m, (v, k) => { out[out.length] = k; out[out.length] = v; });
      return out;
    },
    setValues(s) {
      const out = [];
      setForEach.call(s, (v) => { out[out.length] = v; });
      return out;
    },
    makeMap(flat) {
      const m = new Map();
      for (let i = 0; i < flat.length; i += 2) mapSet.call(m, flat[i], flat[i + 1]);
      return m;
    },
    makeSet(list) {
      const s = new Set();
      for (let i = 0; i < list.length; i++) setAdd.call(s, list[i]);
      return s;
    },
    frozen: isFrozen(globalThis),
  };
  return freeze(helpers);
})
