// prelude.js: the JavaScript half of the ptcx guest, embedded into guest.wasm
// by build.sh and evaluated once per instance by glue/glue.c (ptcx_init).
//
// It is a single function expression. The glue calls it with the natives
// object (call, log, timerSet, timerClear, result, error, encode; see
// glue/natives.c) and keeps the hooks it returns (start, toolError, fire,
// report, reset, tools, handle). Programs see only what it installs on the global object:
// tools (unless lexicalTools), ToolCallError, console, setTimeout and clearTimeout,
// and their tools in the scope around their own (the wrapper's). See docs/abi.md.
//
// Everything the prelude needs later is captured here, before any program
// code runs, and nothing it uses afterwards goes through a prototype a
// program could replace: a program can only break itself, never the way its
// own nested calls are checked, dispatched, resolved or reported. So the
// prelude's descriptors and internal lists have no prototype, descriptors it
// reads are read through their own properties, and its hooks describe an
// outcome even when describing it throws.
//
// No function of the prelude or of the natives is reachable from a program,
// save the globals above. A program reaches the functions on its stack only
// through V8's stack trace API, which QuickJS-NG implements: a function set
// as Error.prepareStackTrace gets CallSite objects whose getFunction()
// returns the frame's function, the prelude's and the natives' included
// (prelude code creates errors and calls program code: getters, timer
// callbacks). So the prelude turns that API off before any program runs:
// Error.prepareStackTrace becomes a read-only undefined, which leaves
// CallSite objects unreachable (only the engine's prepareStackTrace setter
// makes them), and Error.stackTraceLimit a read-only number, so that no
// program code (a valueOf) runs when the prelude or the engine creates an
// error. Stacks stay strings, error.stack and Error.captureStackTrace work.
// Function.prototype.caller and arguments.callee.caller are undefined in
// QuickJS, and the prelude's functions show no source (the host loads the
// prelude from bytecode compiled without it). wasmhost/introspection_test.go
// tries every route.
(function (natives) {
  "use strict";

  const G = globalThis;
  const O = Object;
  const { create, defineProperty, freeze, getPrototypeOf, setPrototypeOf, keys, getOwnPropertyDescriptor, hasOwn, is } = O;
  const ObjectProto = O.prototype;
  const ErrorProto = Error.prototype;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const PromiseCtor = Promise;
  const ProxyCtor = Proxy;
  const isArray = Array.isArray;
  // Only ever given strings: on objects JSON.stringify keeps a list of its
  // own in an array, which a setter on Array.prototype would see.
  const stringify = JSON.stringify;
  const toStr = String;
  const apply = Reflect.apply;
  const floor = Math.floor;
  const uncurry = (f) => (self, ...args) => apply(f, self, args);
  const strSlice = uncurry(String.prototype.slice);
  const strIndexOf = uncurry(String.prototype.indexOf);
  const strSplit = uncurry(String.prototype.split);
  const regexpExec = uncurry(RegExp.prototype.exec);
  const regexpSource = uncurry(getOwnPropertyDescriptor(RegExp.prototype, "source").get);
  // RegExp.prototype.flags reads the flags through the prototype (a program
  // can replace them); each flag's own getter reads the regexp itself.
  const regexpFlagGetters = [["d", "hasIndices"], ["g", "global"], ["i", "ignoreCase"], ["m", "multiline"],
    ["s", "dotAll"], ["u", "unicode"], ["v", "unicodeSets"], ["y", "sticky"]];
  for (let i = 0; i < regexpFlagGetters.length; i++) {
    const d = getOwnPropertyDescriptor(RegExp.prototype, regexpFlagGetters[i][1]);
    regexpFlagGetters[i][1] = d !== undefined ? uncurry(d.get) : () => false;
  }
  function regexpFlags(re) {
    let flags = "";
    for (let i = 0; i < regexpFlagGetters.length; i++) if (regexpFlagGetters[i][1](re)) flags += regexpFlagGetters[i][0];
    return flags;
  }
  const dateGetTime = uncurry(Date.prototype.getTime);
  const dateToISOString = uncurry(Date.prototype.toISOString);
  const mapSize = uncurry(getOwnPropertyDescriptor(Map.prototype, "size").get);
  const mapForEach = uncurry(Map.prototype.forEach);
  const setSize = uncurry(getOwnPropertyDescriptor(Set.prototype, "size").get);
  const setForEach = uncurry(Set.prototype.forEach);
  const arrayJoin = uncurry(Array.prototype.join);
  const strLastIndexOf = uncurry(String.prototype.lastIndexOf);
  const isFinite = Number.isFinite;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMapCtor.prototype.get);
  const weakSet = uncurry(WeakMapCtor.prototype.set);
  const weakHas = uncurry(WeakMapCtor.prototype.has);
  const toStringTag = Symbol.toStringTag;
  const natTools = natives.tools;
  const natLog = natives.log;
  const natTimerSet = natives.timerSet;
  const natTimerClear = natives.timerClear;
  const natResult = natives.result;
  const natError = natives.error;
  const natEncode = natives.encode;

  const DONE = 0;
  const ERROR = 2;
  // Report codes: PTCX_REPORT_* in ptcx.h.
  const REPORT_RESULT = 0, REPORT_THROWN = 1, REPORT_UNHANDLED = 2, REPORT_SYNTAX = 3, REPORT_TIMER = 4;
  // Refusal codes of natives.call and natives.timerSet: docs/abi.md.
  const REFUSED_PENDING = -1, REFUSED_TOTAL = -2, REFUSED_TIMERS = -3;
  // Columns on line 1 of the program are offset by the wrapper in glue.c.
  const WRAPPER_HEAD = "(function(tools){return async function(){".length;
  // A session's programs (glue.c, session_head) are compiled by a direct
  // eval, whose frames are named <input>, behind a longer wrapper; their
  // frames are shown as <program> all the same. session is set per start.
  const SESSION_HEAD = "(function(){let __ptcx_k;return [()=>__ptcx_k,async function(){__ptcx_k=(__ptcx_s)=>{'use strict';return eval(__ptcx_s)};".length;
  let session = false;
  // The tools of the program just started, which the glue takes once (the
  // hook tools) to pass to the program's wrapper.
  let started = undefined;
  const MAX_JSON_DEPTH = 100; // PTCX_JSON_DEPTH in encode.c
  const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  let limits = { maxPendingCalls: 0, maxCalls: 0, maxTimers: 0, memoryBytes: 0 };

  // The stack trace API, off (see the top of this file).
  defineProperty(ErrorCtor, "prepareStackTrace", { __proto__: null, value: undefined, writable: false, enumerable: false, configurable: false });
  defineProperty(ErrorCtor, "stackTraceLimit", { __proto__: null, value: +ErrorCtor.stackTraceLimit, writable: false, enumerable: false, configurable: false });

  // list returns an empty array without a prototype: writing past its end
  // finds no setter a program put on Array.prototype, and reading finds no
  // getter.
  function list() {
    return setPrototypeOf([], null);
  }

  // ---- Plain JSON: checked and encoded by natives.encode (encode.c). ----

  // Refusal codes of natives.encode: PTCX_REFUSE_* in ptcx.h.
  const REFUSE_UNDEFINED = 1, REFUSE_FUNCTION = 2, REFUSE_BIGINT = 3, REFUSE_SYMBOL = 4, REFUSE_NUMBER = 5,
    REFUSE_CIRCULAR = 6, REFUSE_DEPTH = 7, REFUSE_NOT_PLAIN = 8, REFUSE_UNREADABLE = 9, REFUSE_PROXY = 10;

  function accessor(key) {
    return regexpExec(identifier, key) !== null ? "." + key : "[" + stringify(key) + "]";
  }

  function errorText(e) {
    try {
      if (isErrorLike(e)) return toStr(e.name) + ": " + toStr(e.message);
      return render(e, 1, list());
    } catch {
      return "an unreadable error";
    }
  }

  // describeKind names what a non-plain object is, for messages.
  function describeKind(v) {
    try {
      dateGetTime(v);
      return "a Date (convert it with toISOString())";
    } catch {}
    try {
      mapSize(v);
      return "a Map (convert it with Object.fromEntries())";
    } catch {}
    try {
      setSize(v);
      return "a Set (convert it with Array.from())";
    } catch {}
    const name = constructorName(v);
    if (name === "Promise") return "a Promise (await it first)";
    return name ? "an instance of " + name + ", not a plain object or array" : "not a plain object or array";
  }

  function refusalText(code, detail) {
    switch (code) {
      case REFUSE_UNDEFINED:
        return "is undefined, which JSON cannot represent (leave it out or use null)";
      case REFUSE_FUNCTION:
        return "is a function";
      case REFUSE_BIGINT:
        return "is a BigInt (" + toStr(detail) + "n); convert it to a number or a string";
      case REFUSE_SYMBOL:
        return "is a symbol";
      case REFUSE_NUMBER:
        return "is " + toStr(detail) + ", which JSON cannot represent";
      case REFUSE_CIRCULAR:
        return "is a circular reference to one of its parents";
      case REFUSE_DEPTH:
        return "is nested more than " + MAX_JSON_DEPTH + " levels deep";
      case REFUSE_NOT_PLAIN:
        return "is " + describeKind(detail);
      case REFUSE_UNREADABLE:
        return "could not be read (" + errorText(detail) + ")";
      case REFUSE_PROXY:
        return "is a Proxy; pass a plain copy of it";
    }
    return "is not plain JSON";
  }

  // Tool arguments and results are checked and encoded by natives.encode
  // (encode.c; a tool's function calls it in C): an undefined object
  // property is left out, as JSON.stringify does, so that an optional
  // property set to undefined means "absent", as TypeScript's types say;
  // undefined anywhere else (an array element) is refused.

  // ---- Rendering values for console output. ----

  const RENDER_DEPTH = 4, RENDER_ITEMS = 100, RENDER_STRING = 1000, RENDER_TOTAL = 10000;

  function constructorName(v) {
    try {
      const proto = getPrototypeOf(v);
      if (proto === null || proto === ObjectProto) return "";
      const d = getOwnPropertyDescriptor(proto, "constructor");
      const ctor = d !== undefined && hasOwn(d, "value") ? d.value : undefined;
      const name = typeof ctor === "function" ? ctor.name : "";
      return typeof name === "string" ? name : "";
    } catch {
      return "";
    }
  }

  function isErrorLike(v) {
    try {
      for (let p = getPrototypeOf(v); p !== null; p = getPrototypeOf(p)) {
        if (p === ErrorProto) return true;
      }
    } catch {}
    return false;
  }

  function quote(s) {
    if (s.length > RENDER_STRING) {
      return stringify(strSlice(s, 0, RENDER_STRING)) + "... (" + (s.length - RENDER_STRING) + " more characters)";
    }
    return stringify(s);
  }

  function renderKey(k) {
    return regexpExec(identifier, k) !== null ? k : stringify(k);
  }

  function render(v, depth, seen) {
    switch (typeof v) {
      case "string":
        return quote(v);
      case "number":
        return is(v, -0) ? "-0" : toStr(v);
      case "bigint":
        return toStr(v) + "n";
      case "symbol":
        return toStr(v);
      case "undefined":
        return "undefined";
      case "boolean":
        return v ? "true" : "false";
      case "function": {
        let name = "";
        try {
          name = v.name;
        } catch {}
        return "[Function: " + (typeof name === "string" && name ? name : "(anonymous)") + "]";
      }
    }
    if (v === null) return "null";
    const n = seen.length;
    for (let i = 0; i < n; i++) if (seen[i] === v) return "[Circular]";
    seen[n] = v;
    try {
      return renderObject(v, depth, seen);
    } catch {
      return "[object that could not be inspected]";
    } finally {
      seen.length = n;
    }
  }

  function renderError(v, depth) {
    const head = toStr(v.name) + ": " + toStr(v.message);
    if (depth > 0) return "[" + head + "]";
    const stack = cleanStack(v.stack);
    return stack ? head + "\n" + stack : head;
  }

  function renderList(open, items, total, close) {
    let s = open;
    for (let i = 0; i < items.length; i++) s += (i ? ", " : "") + items[i];
    if (total > items.length) s += (items.length ? ", " : "") + "... " + (total - items.length) + " more";
    return s + close;
  }

  function renderObject(v, depth, seen) {
    if (isErrorLike(v)) return renderError(v, depth);
    try {
      const t = dateGetTime(v);
      return t === t ? dateToISOString(v) : "Invalid Date";
    } catch {}
    try {
      return "/" + regexpSource(v) + "/" + regexpFlags(v);
    } catch {}
    const name = constructorName(v);
    const deeper = depth + 1;
    if (isArray(v)) {
      if (depth >= RENDER_DEPTH) return "[Array]";
      const n = v.length, items = list();
      for (let i = 0; i < n && i < RENDER_ITEMS; i++) items[i] = render(v[i], deeper, seen);
      return renderList("[", items, n, "]");
    }
    let size = -1, forEach, isMap = false;
    try {
      size = mapSize(v);
      forEach = mapForEach;
      isMap = true;
    } catch {
      try {
        size = setSize(v);
        forEach = setForEach;
      } catch {}
    }
    if (size >= 0) {
      if (depth >= RENDER_DEPTH) return "[" + name + "]";
      const items = list();
      forEach(v, (value, key) => {
        if (items.length < RENDER_ITEMS) {
          items[items.length] = isMap ? render(key, deeper, seen) + " => " + render(value, deeper, seen) : render(value, deeper, seen);
        }
      });
      return renderList(name + "(" + size + ") {", items, size, "}");
    }
    if (depth >= RENDER_DEPTH) return "[" + (name || "Object") + "]";
    const names = keys(v), items = list();
    for (let i = 0; i < names.length && i < RENDER_ITEMS; i++) {
      const d = getOwnPropertyDescriptor(v, names[i]);
      let shown;
      if (d === undefined) continue;
      if (hasOwn(d, "get")) shown = d.get && d.set ? "[Getter/Setter]" : d.get ? "[Getter]" : "[Setter]";
      else shown = render(d.value, deeper, seen);
      items[items.length] = renderKey(names[i]) + ": " + shown;
    }
    return (name ? name + " " : "") + renderList("{", items, names.length, "}");
  }

  function format(args) {
    let line = "";
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      let s = typeof a === "string" ? a : render(a, 0, list());
      if (typeof a !== "string" && s.length > RENDER_TOTAL) {
        s = strSlice(s, 0, RENDER_TOTAL) + "... (" + (s.length - RENDER_TOTAL) + " more characters)";
      }
      line += (i ? " " : "") + s;
    }
    return line;
  }

  // cleanStack drops the prelude's frames and fixes columns on line 1.
  function cleanStack(stack) {
    if (typeof stack !== "string") return "";
    const lines = strSplit(stack, "\n");
    const head = session ? SESSION_HEAD : WRAPPER_HEAD;
    let out = "";
    for (let i = 0; i < lines.length; i++) {
      let l = lines[i];
      if (l === "" || strIndexOf(l, "<prelude>") >= 0 || strIndexOf(l, "<session>") >= 0) continue;
      if (session) l = programFrame(l);
      const at = strIndexOf(l, "<program>:1:");
      if (at >= 0) {
        const start = at + "<program>:1:".length;
        let end = start;
        while (end < l.length && l[end] >= "0" && l[end] <= "9") end++;
        const col = +strSlice(l, start, end) - head;
        l = strSlice(l, 0, start) + toStr(col > 0 ? col : 1) + strSlice(l, end);
      }
      out += (out ? "\n" : "") + l;
    }
    return out;
  }

  // programFrame names a session program's frame (<input>) <program>.
  function programFrame(l) {
    const at = strIndexOf(l, "<input>:");
    return at < 0 ? l : strSlice(l, 0, at) + "<program>:" + strSlice(l, at + "<input>:".length);
  }

  // ---- Handles (docs/abi.md, "Handles"). ----

  // A handle is a frozen object whose value stays with the host. Its ref,
  // the host's unforgeable name for it in this execution, is kept here,
  // never on the object: no program code can read it. The host answers a
  // call with a handle (ptcx_resume's ok 2) with an envelope {ref, size,
  // labels, tool}, which the hook handle turns into the object. A handle
  // in a tool's arguments or in the result is sent as the marker
  // {"$ptcx.handle": ref}; the host replaces it (with the value, or with a
  // placeholder for the model) and refuses a marker of a ref it did not
  // give this execution. text() and json() read the value with the
  // reserved internal call HANDLE_CALL, which no program can make.
  const HANDLE_MARK = "$ptcx.handle";
  const HANDLE_CALL = "$handle";
  const handleRefs = new WeakMapCtor();
  const isHandle = (v) => v !== null && typeof v === "object" && weakHas(handleRefs, v);
  const handleCalls = create(null);
  natTools([HANDLE_CALL], (name, r) => toolRefused("$handle", r), create(null), handleCalls);
  const readHandle = handleCalls[HANDLE_CALL];

  function handleRead(h, as) {
    const ref = h !== null && typeof h === "object" ? weakGet(handleRefs, h) : undefined;
    if (ref === undefined) return rejected(new TypeErrorCtor("Handle." + as + "() must be called on a handle"));
    return readHandle({ __proto__: null, ref, as });
  }
  function Handle() {
    throw new TypeErrorCtor("handles are made by the host: a tool declared to return handles gives them");
  }
  const HandleProto = create(null);
  defineProperty(HandleProto, "constructor", { __proto__: null, value: Handle });
  defineProperty(HandleProto, "text", { __proto__: null, value: freeze(function text() { return handleRead(this, "text"); }) });
  defineProperty(HandleProto, "json", { __proto__: null, value: freeze(function json() { return handleRead(this, "json"); }) });
  defineProperty(HandleProto, "toString", { __proto__: null, value: freeze(function handleToString() {
    throw new TypeErrorCtor("a Handle is not text: read it with await handle.text(), or pass the handle itself to a tool");
  }) });
  defineProperty(HandleProto, toStringTag, { __proto__: null, value: "Handle" });
  freeze(HandleProto);
  defineProperty(Handle, "prototype", { __proto__: null, value: HandleProto, writable: false });
  freeze(Handle);

  // makeHandle is the Handle object of a host's envelope (the hook
  // handle).
  function makeHandle(env) {
    const own = (k) => (env !== null && typeof env === "object" && hasOwn(env, k) ? env[k] : undefined);
    const l = own("labels");
    const label = (k) => (l !== null && typeof l === "object" && hasOwn(l, k) ? toStr(l[k]) : "");
    const h = create(HandleProto);
    defineProperty(h, "size", { __proto__: null, value: +own("size") || 0, enumerable: true });
    defineProperty(h, "labels", { __proto__: null, value: freeze({ integrity: label("integrity"), confidentiality: label("confidentiality") }), enumerable: true });
    defineProperty(h, "tool", { __proto__: null, value: toStr(own("tool")), enumerable: true });
    freeze(h);
    weakSet(handleRefs, h, toStr(own("ref")));
    return h;
  }

  // marked returns a copy of a tool's arguments with each handle replaced
  // by its marker: plain objects and arrays are copied (a getter read once
  // more), anything else is kept for the encoder to refuse as it would.
  // Properties are defined, not set, so no setter of a program's sees a
  // marker.
  function marked(v, depth) {
    if (v === null || typeof v !== "object") return v;
    const ref = weakGet(handleRefs, v);
    if (ref !== undefined) {
      const m = create(null);
      defineProperty(m, HANDLE_MARK, { __proto__: null, value: ref, enumerable: true });
      return m;
    }
    if (depth >= MAX_JSON_DEPTH) return v;
    if (isArray(v)) {
      const n = v.length, out = [];
      for (let i = 0; i < n; i++) {
        defineProperty(out, i, { __proto__: null, value: marked(v[i], depth + 1), writable: true, enumerable: true, configurable: true });
      }
      return out;
    }
    const p = getPrototypeOf(v);
    if (p !== ObjectProto && p !== null) return v;
    const out = create(null), names = keys(v);
    for (let i = 0; i < names.length; i++) {
      defineProperty(out, names[i], { __proto__: null, value: marked(v[names[i]], depth + 1), writable: true, enumerable: true, configurable: true });
    }
    return out;
  }

  // ---- ToolCallError and tools. ----

  // ToolCallError.code is the call's error code (api.Code: DENIED,
  // TOOL_TIMEOUT, TOOL_FAILED, INVALID_ARGS, ...); TOOL_FAILED when none
  // was given.
  class ToolCallError extends ErrorCtor {
    constructor(message, toolName, code) {
      super(message);
      defineProperty(this, "toolName", { __proto__: null, value: toStr(toolName), enumerable: true });
      defineProperty(this, "code", { __proto__: null, value: code === undefined ? "TOOL_FAILED" : toStr(code), enumerable: true });
    }
  }
  defineProperty(ToolCallError.prototype, "name", { __proto__: null, value: "ToolCallError" });
  freeze(ToolCallError.prototype);
  freeze(ToolCallError);

  function rejected(e) {
    return new PromiseCtor((_, reject) => reject(e));
  }

  function callRefused(name, code) {
    switch (code) {
      case REFUSED_PENDING:
        return "too many nested calls pending at once (the limit is " + limits.maxPendingCalls +
          "): await some of them before starting more";
      case REFUSED_TOTAL:
        return "this program reached its limit of " + limits.maxCalls + " nested calls";
    }
    return "the host refused the call (code " + code + ")";
  }

  // toolRefused is the promise of a call its tool's function (natives.tools,
  // calls.c) did not make: r is why, the refusal of natives.encode for
  // arguments that are not plain JSON, or the host's refusal code.
  function toolRefused(name, r) {
    if (typeof r === "number") {
      return rejected(new ToolCallError(callRefused(name, r), name, r === REFUSED_PENDING ? "BUSY" : "DENIED"));
    }
    return rejected(new TypeErrorCtor("tools" + accessor(name) + ": the arguments are not plain JSON: args" + r[1] + " " +
      refusalText(r[0], r[2])));
  }


  // Names a program may probe on tools without it being an error: promise
  // detection (then), serialisation and conversions.
  const probes = freeze({ __proto__: null, then: 1, toJSON: 1, constructor: 1, valueOf: 1, toString: 1 });

  function unbound(bound, key, searchable) {
    if (key === "run_code") return "tools.run_code is not available: run_code cannot be called from inside a program";
    if (key === "$search" || key === "$describe") {
      return "tools." + key + " is not available: every bound tool is declared in the prompt (a catalog comes only with a large tool set)";
    }
    if (searchable) {
      return "tools" + accessor(key) + " is not a bound tool; find the right name with tools.$search(\"what it does\")";
    }
    const names = keys(bound);
    let list = "";
    for (let i = 0; i < names.length && i < 20; i++) list += (i ? ", " : "") + names[i];
    if (names.length > 20) list += ", and " + (names.length - 20) + " more";
    return "tools" + accessor(key) + " is not a bound tool; " +
      (names.length ? "the bound tools are: " + list : "no tools are bound to this program");
  }

  // makeTools returns the tools object: a frozen object with one own
  // function per bound name, found without any trap, whose prototype is a
  // proxy that explains the names that are not bound. A tool named "then" is
  // not a property (tools would be a thenable, and await tools would call
  // it): tools.$call(name, args) calls any bound tool by its name. Dotted
  // names get a namespace besides (namespaces). With a catalog (a large
  // tool set, docs/abi.md), tools.$search and tools.$describe answer from it.
  function makeTools(names, catalogText) {
    let bound;
    bound = create(explainer((key) => unbound(bound, key, catalogText !== "")));
    const byName = create(null);
    // Arguments that hold a handle are refused by the encoder (a handle is
    // no plain object): they are passed again, once, with each handle's
    // marker in its place.
    let marking = false;
    const refused = (name, r, args) => {
      if (marking || typeof r === "number" || r[0] !== REFUSE_NOT_PLAIN || !isHandle(r[2])) return toolRefused(name, r);
      const copy = marked(args, 0);
      marking = true;
      try {
        return byName[name](copy);
      } finally {
        marking = false;
      }
    };
    // One frozen function per name, on byName and (save "then") on bound
    // as an enumerable read-only property (natives.tools, calls.c);
    // namespaces only when a name is dotted.
    if (natTools(names, refused, bound, byName)) namespaces(bound, byName);
    const call = (name, args) => {
      const n = toStr(name);
      if (hasOwn(byName, n)) return byName[n](args);
      return rejected(new TypeErrorCtor(unbound(bound, n, catalogText !== "")));
    };
    defineProperty(bound, "$call", { __proto__: null, value: freeze(call), enumerable: false });
    if (catalogText !== "") {
      const c = catalog(catalogText);
      defineProperty(bound, "$search", { __proto__: null, value: freeze((query, limit) => c.search(query, limit)), enumerable: false });
      defineProperty(bound, "$describe", { __proto__: null, value: freeze((name) => c.describe(name)), enumerable: false });
    }
    return freeze(bound);
  }

  // explainer returns a frozen proxy to put below a frozen object of
  // functions: reading a string key the object does not have throws a
  // TypeError with message(key), save the probes.
  function explainer(message) {
    return new ProxyCtor(freeze(create(null)), freeze({
      __proto__: null,
      get(target, key) {
        if (typeof key !== "string" || probes[key] === 1) return undefined;
        throw new TypeErrorCtor(message(key));
      },
      has: () => false,
      set: () => {
        throw new TypeErrorCtor("tools is read-only");
      },
    }));
  }

  // namespaces gives every dotted name whose segments are identifiers a
  // path of frozen namespace objects on bound: "fs.read_file" is also
  // tools.fs.read_file. A name is left to bracket access (tools["a.b"])
  // when a segment is "then" (a namespace would be a thenable), when its
  // first segment is a tool's name or starts with "$", or when a shorter
  // dotted name is a prefix of it, or it of a longer one (one key cannot
  // be both a tool and a namespace). sdkgen/namespaces.go applies the same
  // rule to the declarations.
  function namespaces(bound, byName) {
    const all = keys(byName), dotted = list(), prefixes = create(null);
    for (let i = 0; i < all.length; i++) {
      if (strIndexOf(all[i], ".") < 0) continue;
      const parts = strSplit(all[i], ".");
      dotted[dotted.length] = parts;
      let prefix = parts[0];
      for (let j = 1; j < parts.length; j++) {
        prefixes[prefix] = 1;
        prefix += "." + parts[j];
      }
    }
    const tree = create(null);
    for (let i = 0; i < dotted.length; i++) {
      const parts = dotted[i];
      if (!namespaced(parts, byName, prefixes)) continue;
      const name = arrayJoin(parts, ".");
      let node = tree;
      for (let j = 0; j < parts.length - 1; j++) {
        const k = parts[j];
        if (node[k] === undefined) node[k] = create(null);
        node = node[k];
      }
      node[parts[parts.length - 1]] = byName[name];
    }
    const build = (node, path) => {
      const ns = create(explainer((key) => "tools." + path + accessor(key) + " is not a bound tool; see tools." + path + " for the ones there are"));
      const ks = keys(node);
      for (let i = 0; i < ks.length; i++) {
        const v = node[ks[i]];
        defineProperty(ns, ks[i], { __proto__: null, value: typeof v === "function" ? v : build(v, path + "." + ks[i]), enumerable: true });
      }
      return freeze(ns);
    };
    const top = keys(tree);
    for (let i = 0; i < top.length; i++) {
      defineProperty(bound, top[i], { __proto__: null, value: build(tree[top[i]], top[i]), enumerable: false });
    }
  }

  function namespaced(parts, byName, prefixes) {
    if (strSlice(parts[0], 0, 1) === "$") return false;
    let prefix = "";
    for (let j = 0; j < parts.length; j++) {
      if (parts[j] === "then" || regexpExec(identifier, parts[j]) === null) return false;
      prefix += (j ? "." : "") + parts[j];
      if (j < parts.length - 1 && hasOwn(byName, prefix)) return false;
    }
    return prefixes[prefix] !== 1;
  }

  // ---- The catalog of a large tool set: tools.$search, tools.$describe. ----

  const SEARCH_LIMIT = 10, SEARCH_MAX = 50;
  const parseJSON = JSON.parse;
  const toLower = uncurry(String.prototype.toLowerCase);
  const trim = uncurry(String.prototype.trim);
  const arraySort = uncurry(Array.prototype.sort);
  const charCode = uncurry(String.prototype.charCodeAt);

  // words returns the distinct lower-case words of s (runs of ASCII letters
  // and digits) as keys of a prototype-less object. It reads characters one
  // by one: a split on a regexp would run RegExp.prototype[Symbol.split],
  // which a program can replace.
  function words(s) {
    const out = create(null), t = toLower(s);
    let start = -1;
    for (let i = 0; i <= t.length; i++) {
      const c = i < t.length ? charCode(t, i) : 0;
      const word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
      if (word && start < 0) start = i;
      else if (!word && start >= 0) {
        out[strSlice(t, start, i)] = 1;
        start = -1;
      }
    }
    return out;
  }

  function deepFreeze(v) {
    if (v !== null && typeof v === "object") {
      const ks = keys(v);
      for (let i = 0; i < ks.length; i++) deepFreeze(v[ks[i]]);
      freeze(v);
    }
    return v;
  }

  // catalog answers $search and $describe from the catalog's JSON text
  // (docs/abi.md), parsed on first use: a program that never asks pays
  // nothing for it.
  function catalog(text) {
    let entries, byName, index;
    const load = () => {
      if (entries !== undefined) return;
      const parsed = parseJSON(text);
      entries = list();
      byName = create(null);
      index = list();
      for (let i = 0; i < parsed.length; i++) {
        const e = parsed[i];
        entries[i] = e;
        byName[e.name] = e;
        index[i] = { __proto__: null, name: toLower(e.name), nameWords: words(e.name),
          text: toLower(e.summary + " " + e.description), textWords: words(e.summary + " " + e.description) };
      }
    };
    // score: 100 when the query is the whole name; for each distinct word
    // of the query, 10 when it is a word of the name, else 5 when the name
    // contains it, plus 3 when it is a word of the description, else 1 when
    // the description contains it (docs/abi.md).
    const score = (ix, q, terms) => {
      let n = ix.name === q ? 100 : 0;
      for (let i = 0; i < terms.length; i++) {
        const t = terms[i];
        if (ix.nameWords[t] === 1) n += 10;
        else if (strIndexOf(ix.name, t) >= 0) n += 5;
        if (ix.textWords[t] === 1) n += 3;
        else if (strIndexOf(ix.text, t) >= 0) n += 1;
      }
      return n;
    };
    const search = (query, limit) => {
      if (typeof query !== "string") throw new TypeErrorCtor("tools.$search(query, limit?): query must be a string, such as \"read a file\"");
      let max = limit === undefined ? SEARCH_LIMIT : floor(+limit);
      if (!(max >= 1)) throw new RangeErrorCtor("tools.$search(query, limit?): limit must be a number from 1 to " + SEARCH_MAX);
      if (max > SEARCH_MAX) max = SEARCH_MAX;
      load();
      const q = trim(toLower(query)), terms = keys(words(query)), hits = list();
      for (let i = 0; i < entries.length; i++) {
        const n = score(index[i], q, terms);
        if (n > 0) hits[hits.length] = { __proto__: null, n, e: entries[i] };
      }
      arraySort(hits, (a, b) => (b.n - a.n) || (a.e.name < b.e.name ? -1 : a.e.name > b.e.name ? 1 : 0));
      const out = [];
      for (let i = 0; i < hits.length && i < max; i++) {
        defineProperty(out, i, { __proto__: null, value: freeze({ name: hits[i].e.name, description: hits[i].e.summary }), enumerable: true });
      }
      return freeze(out);
    };
    const describe = (name) => {
      load();
      const n = toStr(name);
      if (!hasOwn(byName, n)) {
        throw new TypeErrorCtor("tools.$describe(" + stringify(n) + "): no bound tool has that name; find one with tools.$search(\"what it does\")");
      }
      const e = byName[n];
      return deepFreeze({ name: e.name, description: e.description, declaration: e.declaration,
        inputSchema: e.inputSchema, outputSchema: e.outputSchema });
    };
    return freeze({ __proto__: null, search, describe });
  }

  // ---- console and timers. ----

  function logger(level) {
    return function (...args) {
      natLog(level, format(args));
    };
  }
  const consoleObject = freeze({
    __proto__: null,
    log: logger(0),
    info: logger(1),
    debug: logger(2),
    warn: logger(3),
    error: logger(4),
  });

  const timers = create(null);

  function setTimeout(callback, delay, ...args) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor("setTimeout: the callback must be a function");
    }
    let ms = +delay;
    if (!(ms > 0)) ms = 0;
    if (ms > 2147483647) ms = 2147483647;
    const id = natTimerSet(floor(ms));
    if (id <= 0) {
      throw new RangeErrorCtor(id === REFUSED_TIMERS
        ? "setTimeout: too many pending timers (the limit is " + limits.maxTimers + ")"
        : "setTimeout: the host refused the timer (code " + id + ")");
    }
    timers[id] = { callback, args };
    return id;
  }

  function clearTimeout(id) {
    if (typeof id === "number" && timers[id] !== undefined) {
      delete timers[id];
      natTimerClear(id);
    }
  }

  function global(name, value) {
    defineProperty(G, name, { __proto__: null, value, writable: false, enumerable: false, configurable: false });
  }
  global("console", consoleObject);
  global("ToolCallError", ToolCallError);
  global("setTimeout", freeze(setTimeout));
  global("clearTimeout", freeze(clearTimeout));

  // ---- Reporting outcomes. ----

  const MAX_REPORT = 10000;

  function cap(s) {
    return s.length > MAX_REPORT ? strSlice(s, 0, MAX_REPORT) + "... (" + (s.length - MAX_REPORT) + " more characters)" : s;
  }

  function fail(kind, message, stack, line, column) {
    const e = create(null);
    e.kind = kind;
    e.message = cap(message);
    if (stack) e.stack = cap(stack);
    if (line > 0) {
      e.line = line;
      e.column = column;
    }
    natError(natEncode(e, true));
    return ERROR;
  }

  function mib(n) {
    return n >= 1048576 ? floor(n / 1048576) + " MiB" : n + " bytes";
  }

  function failMemory(prefix) {
    return fail("memory", prefix + "out of memory: the program needs more than its memory limit of " + mib(limits.memoryBytes));
  }

  // failThrown describes an uncaught exception. exhausted says memory ran
  // out during the run: short of memory, the engine throws null or an
  // InternalError with a makeshift message instead of "out of memory".
  function failThrown(prefix, v, exhausted) {
    if (exhausted && (v === null || (isErrorLike(v) && v.name === "InternalError"))) return failMemory(prefix);
    if (!isErrorLike(v)) {
      return fail("exception", prefix + "the program threw a value that is not an Error: " + render(v, 1, list()));
    }
    let name = "Error", message = "", stack = "";
    try {
      name = toStr(v.name);
      message = toStr(v.message);
      stack = cleanStack(v.stack);
    } catch {}
    if (name === "InternalError" && message === "out of memory") return failMemory(prefix);
    return fail("exception", prefix + name + ": " + message, stack);
  }

  function failSyntax(v, exhausted) {
    if (!isErrorLike(v) || v.name !== "SyntaxError") return failThrown("", v, exhausted);
    const m = regexpExec(session ? /<input>:(\d+):(\d+)/ : /<program>:(\d+):(\d+)/, toStr(v.stack));
    const head = session ? SESSION_HEAD : WRAPPER_HEAD;
    let line = 0, column = 0;
    if (m !== null) {
      line = +m[1];
      column = +m[2];
      if (line === 1) column = column > head ? column - head : 1;
    }
    // The location is in line and column, not in the message.
    return fail("syntax", "SyntaxError: " + toStr(v.message), "", line, column);
  }

  function finish(value) {
    if (value === undefined) return DONE;
    const r = natEncode(value, true);
    let json = r;
    if (typeof r !== "string") {
      // Not plain JSON: made JSON as JSON.stringify would (and a Map, a Set,
      // a Date as a model means them), unless it cannot be.
      const code = r[0];
      if (code === REFUSE_CIRCULAR || code === REFUSE_BIGINT || code === REFUSE_UNREADABLE || code === REFUSE_PROXY) {
        return fail("invalid-output", "the program's result is not JSON: result" + r[1] + " " + refusalText(code, r[2]));
      }
      const c = converter();
      json = c.value("", value, "result", 0);
      if (c.failure !== "") return fail("invalid-output", "the program's result is not JSON: " + c.failure);
      if (c.notes !== "") natLog(0, "[ptcx] the result was converted to JSON: " + c.notes);
      if (json === undefined) return DONE; // a function or a symbol: no result, as JSON.stringify says
    }
    natResult(json);
    return DONE;
  }

  // ---- Results as JSON.stringify makes them. ----

  // A result nests at most RESULT_DEPTH levels (tool arguments: 100, in
  // encode.c): each level takes two frames of the engine's stack, which
  // overflows a little past 220.
  const RESULT_DEPTH = 200;

  // converter returns a one-use converter of a result to JSON text, with
  // JSON.stringify's rules (toJSON honoured, NaN and Infinity as null,
  // undefined, functions and symbols left out of objects and null in
  // arrays) plus a Map as an object (or its entries when a key is not a
  // string), a Set as an array, a Date as its ISO string and an Error as
  // its name and message. Each lossy conversion is noted once, with the
  // first path it happened at. Cycles, BigInts, values nested more than
  // RESULT_DEPTH deep and values that throw when read fail, naming the
  // path.
  function converter() {
    const seen = list();
    const noted = create(null);
    const c = { __proto__: null, notes: "", failure: "" };
    const note = (what, path) => {
      if (noted[what] === 1) return;
      noted[what] = 1;
      c.notes += (c.notes ? "; " : "") + what + " (first at " + path + ")";
    };
    const failAt = (path, why) => {
      if (c.failure === "") c.failure = path + " " + why;
      return undefined;
    };
    // value returns the JSON text of v, or undefined when v is left out.
    // In an array (inArray), what is left out of an object becomes null.
    c.value = (key, v, path, depth, inArray) => {
      if (c.failure !== "") return undefined;
      try {
        if (isHandle(v)) return "{" + stringify(HANDLE_MARK) + ":" + stringify(weakGet(handleRefs, v)) + "}";
        if (v !== null && (typeof v === "object" || typeof v === "function")) {
          let isDate = false;
          try {
            dateGetTime(v);
            isDate = true;
          } catch {}
          if (isDate) {
            note("a Date became its ISO string", path);
            const t = dateGetTime(v);
            return t === t ? stringify(dateToISOString(v)) : "null";
          }
          const toJSON = v.toJSON;
          if (typeof toJSON === "function") v = apply(toJSON, v, [key]);
        }
        switch (typeof v) {
          case "string":
            return stringify(v);
          case "number":
            if (isFinite(v)) return toStr(v);
            note(toStr(v) + " became null", path);
            return "null";
          case "boolean":
            return v ? "true" : "false";
          case "bigint":
            return failAt(path, refusalText(REFUSE_BIGINT, v));
          case "undefined":
          case "function":
          case "symbol":
            note((typeof v === "undefined" ? "undefined" : "a " + typeof v) + (inArray ? " became null" : " was left out"), path);
            return undefined;
        }
        if (v === null) return "null";
        return container(v, path, depth);
      } catch (e) {
        return failAt(path, refusalText(REFUSE_UNREADABLE, e));
      }
    };
    function container(v, path, depth) {
      for (let i = 0; i < seen.length; i++) if (seen[i] === v) return failAt(path, refusalText(REFUSE_CIRCULAR));
      if (depth >= RESULT_DEPTH) return failAt(path, "is nested more than " + RESULT_DEPTH + " levels deep");
      seen[seen.length] = v;
      const parts = list();
      let out;
      if (isArray(v)) {
        const n = v.length;
        for (let i = 0; i < n; i++) {
          const s = c.value(toStr(i), v[i], path + "[" + i + "]", depth + 1, true);
          parts[parts.length] = s === undefined ? "null" : s;
        }
        out = "[" + arrayJoin(parts, ",") + "]";
      } else {
        out = mapOrSet(v, path, depth, parts);
        if (out === undefined) {
          if (isErrorLike(v)) {
            note("an Error became its name and message", path);
            out = "{\"name\":" + stringify(toStr(v.name)) + ",\"message\":" + stringify(toStr(v.message)) + "}";
          } else {
            const names = keys(v);
            for (let i = 0; i < names.length; i++) {
              const k = names[i];
              const s = c.value(k, v[k], path + accessor(k), depth + 1);
              if (s !== undefined) parts[parts.length] = stringify(k) + ":" + s;
            }
            out = "{" + arrayJoin(parts, ",") + "}";
          }
        }
      }
      seen.length = seen.length - 1;
      return c.failure === "" ? out : undefined;
    }
    // mapOrSet returns the JSON of a Map or a Set, or undefined for any
    // other object.
    function mapOrSet(v, path, depth, parts) {
      let isMap = false, isSet = false;
      try {
        mapSize(v);
        isMap = true;
      } catch {
        try {
          setSize(v);
          isSet = true;
        } catch {}
      }
      if (isSet) {
        note("a Set became an array", path);
        let i = 0;
        setForEach(v, (item) => {
          const s = c.value(toStr(i), item, path + "[" + i + "]", depth + 1, true);
          parts[parts.length] = s === undefined ? "null" : s;
          i++;
        });
        return "[" + arrayJoin(parts, ",") + "]";
      }
      if (!isMap) return undefined;
      let stringKeys = true;
      mapForEach(v, (_, k) => {
        if (typeof k !== "string") stringKeys = false;
      });
      if (stringKeys) {
        note("a Map became an object", path);
        mapForEach(v, (item, k) => {
          const s = c.value(k, item, path + accessor(k), depth + 1);
          if (s !== undefined) parts[parts.length] = stringify(k) + ":" + s;
        });
        return "{" + arrayJoin(parts, ",") + "}";
      }
      note("a Map with keys that are not strings became an array of [key, value] entries", path);
      let i = 0;
      mapForEach(v, (item, k) => {
        const at = path + "[" + i + "]";
        const ks = c.value("0", k, at + "[0]", depth + 2, true);
        const vs = c.value("1", item, at + "[1]", depth + 2, true);
        parts[parts.length] = "[" + (ks === undefined ? "null" : ks) + "," + (vs === undefined ? "null" : vs) + "]";
        i++;
      });
      return "[" + arrayJoin(parts, ",") + "]";
    }
    return c;
  }

  // ---- Hooks for the glue. ----

  return freeze({
    __proto__: null,
    // start installs tools and returns the program's code.
    start(config) {
      limits = {
        maxPendingCalls: config.maxPendingCalls | 0,
        maxCalls: config.maxCalls | 0,
        maxTimers: config.maxTimers | 0,
        memoryBytes: +config.memoryBytes || 0,
      };
      session = config.session === true;
      const bound = makeTools(isArray(config.tools) ? config.tools : [], typeof config.catalog === "string" ? config.catalog : "");
      started = bound;
      if (!session) {
        // A plan-bound program (lexicalTools) has its tools only in the
        // scope around its own (glue.c's wrapper): code made from text
        // cannot name them.
        if (config.lexicalTools !== true) global("tools", bound);
      } else {
        // Each program of a session gets its own tools, so the global
        // stays configurable; a program can only break this for itself.
        try {
          defineProperty(G, "tools", { __proto__: null, value: bound, writable: false, enumerable: false, configurable: true });
        } catch {
          throw new TypeErrorCtor("an earlier program of this session redefined the global 'tools', so this program " +
            "cannot be given its tools; close the session to start afresh");
        }
      }
      return toStr(config.code);
    },
    // tools hands over the tools of the program just started, once.
    tools() {
      const t = started;
      started = undefined;
      return t;
    },
    // reset forgets the timers of the last program of a session (ptcx_next).
    reset() {
      const ids = keys(timers);
      for (let i = 0; i < ids.length; i++) delete timers[ids[i]];
    },
    // handle makes the Handle object of a call answered with a handle
    // (ptcx_resume's ok 2) from the host's envelope.
    handle(env) {
      return makeHandle(env);
    },
    // toolError makes the rejection of a failed call from the host's
    // payload: the message, then, after a NUL, the error code (docs/abi.md).
    toolError(payload, toolName) {
      const p = toStr(payload);
      const at = strLastIndexOf(p, "\u0000");
      if (at < 0) return new ToolCallError(p, toolName);
      return new ToolCallError(strSlice(p, 0, at), toolName, strSlice(p, at + 1));
    },
    fire(id) {
      const t = timers[id];
      if (t === undefined) return;
      delete timers[id];
      const callback = t.callback, args = t.args;
      // A direct call when there are no arguments keeps the stack free of
      // the prelude's frames (they are filtered out; apply's is not).
      if (args.length === 0) callback();
      else apply(callback, undefined, args);
    },
    // report describes the outcome. Describing it runs program code (the
    // result's getters, the thrown value's name and message), which may
    // throw: the outcome is then the program's failure, never the glue's
    // fallback (which says memory ran out).
    report(what, value, exhausted) {
      const prefix = what === REPORT_UNHANDLED ? "unhandled promise rejection: "
        : what === REPORT_TIMER ? "uncaught exception in a setTimeout callback: " : "";
      try {
        switch (what) {
          case REPORT_RESULT:
            return finish(value);
          case REPORT_SYNTAX:
            return failSyntax(value, exhausted);
        }
        return failThrown(prefix, value, exhausted);
      } catch {
        if (exhausted) return failMemory(prefix);
        return fail(what === REPORT_RESULT ? "invalid-output" : "exception", prefix + (what === REPORT_RESULT
          ? "the program's result could not be read: reading it threw"
          : "the program threw a value that could not be described: describing it threw"));
      }
    },
  });
});
