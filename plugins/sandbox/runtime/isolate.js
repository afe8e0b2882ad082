// Runs first in every tool isolate (a Web Worker with the tool's own permissions),
// before the tool's module is imported.  It captures every built-in it needs
// while they are still pristine, hides the process's stdio and exit, and then
// talks to the supervisor only through a private MessagePort the tool cannot
// reach — so a tool that tampers with globals or posts forged messages on
// `self` cannot affect the protocol.
//
// An isolate serves exactly one call (or one load check): the tool's module is
// imported only when the call arrives, so nothing of the tool runs in a spare
// isolate, and the supervisor terminates the isolate when the call ends, so
// nothing the call left behind (timers, intervals, promises) keeps running.
"use strict";

const apply = Reflect.apply;
const stringify = JSON.stringify;
const portPost = MessagePort.prototype.postMessage;
const mapGet = Map.prototype.get;
const mapSet = Map.prototype.set;
const mapDelete = Map.prototype.delete;
const StringCtor = String;
const ErrorCtor = Error;
const PromiseCtor = Promise;
const ObjectFreeze = Object.freeze;
const defineProperty = Object.defineProperty;
const memoryUsage = Deno.memoryUsage;
const setIntervalNative = setInterval;
const setTimeoutNative = setTimeout;

let port = null;
let toolUrl = "";
let logLimit = 65536;
let maxResult = 1048576;
let memoryLimit = Infinity;
let logUsed = 0;
let logDropped = 0;
let logs = [];
let callId = null;
let nextRequest = 0;
const pending = new Map();

function post(message) {
  apply(portPost, port, [message]);
}

function refuse(what) {
  // A plain function, not an arrow: `new Worker()` must reach the throw too.
  return function () {
    throw new ErrorCtor(`${what} is not available to a sandboxed tool`);
  };
}

for (const name of ["stdin", "stdout", "stderr"]) {
  defineProperty(Deno, name, { get: refuse(`Deno.${name}`), configurable: false });
}
defineProperty(Deno, "exit", { value: refuse("Deno.exit"), writable: false, configurable: false });
defineProperty(self, "close", { value: refuse("close()"), writable: false, configurable: false });
// Nested workers would outlive a terminated call and escape the per-call timeout.
defineProperty(globalThis, "Worker", { value: refuse("new Worker()"), writable: false, configurable: false });
// The Cache API writes to disk even under --deny-write, and a BroadcastChannel
// reaches other tools' isolates: both would be channels around the sandbox.
defineProperty(globalThis, "caches", { get: refuse("the Cache API (caches)"), configurable: false });
defineProperty(globalThis, "BroadcastChannel", { value: refuse("BroadcastChannel"), writable: false, configurable: false });

// `Deno[Deno.internal]` is the runtime's internals object: its `core` calls ops and reads resources directly,
// past every permission check.  Deno's own code imports those internals as modules and this file uses none of
// them, so the handle is removed outright.  Every symbol-keyed property goes, so a renamed key is removed too,
// and `Deno.internal` and `Deno.core` are pinned to undefined so nothing can plant a lookalike.  Strict mode makes a failed
// delete throw, so an isolate where the removal did not happen never becomes ready.
for (const key of Reflect.ownKeys(Deno)) {
  if (typeof key === "symbol") delete Deno[key];
}
defineProperty(Deno, "internal", { value: undefined, writable: false, enumerable: false, configurable: false });
defineProperty(Deno, "core", { value: undefined, writable: false, enumerable: false, configurable: false });

function render(args) {
  let text = "";
  for (let i = 0; i < args.length; i++) {
    const value = args[i];
    let part;
    if (typeof value === "string") part = value;
    else {
      try {
        part = apply(stringify, JSON, [value]);
      } catch {
        part = undefined;
      }
      if (part === undefined) part = StringCtor(value);
    }
    text += (i ? " " : "") + part;
  }
  return text;
}

function record(level, args) {
  if (logUsed >= logLimit) {
    logDropped++;
    return;
  }
  let message = render(args);
  if (logUsed + message.length > logLimit) {
    message = message.slice(0, logLimit - logUsed);
    logDropped++;
  }
  logUsed += message.length;
  // defineProperty, not assignment: a tool may have planted setters on Array.prototype
  defineProperty(logs, logs.length, { value: { level, message }, enumerable: true, writable: true, configurable: true });
}

const captured = {
  log: (...args) => record("info", args),
  info: (...args) => record("info", args),
  debug: (...args) => record("debug", args),
  warn: (...args) => record("warning", args),
  error: (...args) => record("error", args),
  trace: (...args) => record("debug", args),
};
for (const name of Object.keys(console)) {
  if (!(name in captured)) captured[name] = () => {};
}
globalThis.console = captured;

function request(kind, args) {
  const id = ++nextRequest;
  return new PromiseCtor((resolve, reject) => {
    apply(mapSet, pending, [id, { resolve, reject }]);
    post({ op: "request", id, call: callId, kind, args });
  });
}

function describe(error) {
  if (error !== null && typeof error === "object") {
    let name = "Error";
    let message = "";
    let stack = "";
    try {
      name = StringCtor(error.name ?? "Error");
      message = StringCtor(error.message ?? "");
      stack = StringCtor(error.stack ?? "");
    } catch {
      // a hostile error object: report what we have
    }
    return { name, message, stack };
  }
  return { name: "Error", message: `execute threw a non-error value: ${StringCtor(error)}`, stack: "" };
}

// The V8 heap plus memory held outside it (array buffers, typed arrays): all of it counts against memory_mb.
function memoryHeld() {
  const usage = apply(memoryUsage, Deno, []);
  return usage.heapUsed + usage.external;
}

// Precise and per call while the tool yields to the event loop; a tool that allocates in one synchronous
// loop never lets this run, and the node's resident-memory watchdog on the process stops it instead.
function watchMemory(id) {
  apply(setIntervalNative, globalThis, [() => {
    const held = memoryHeld();
    if (held > memoryLimit) post({ op: "memory", id, held });
  }, 10]);
}

async function importTool() {
  const module = await import(toolUrl);
  if (typeof module.execute !== "function") {
    const error = new ErrorCtor("the source does not export a function named execute");
    defineProperty(error, "name", { value: "LoadError" });
    throw error;
  }
  return module.execute;
}

async function check() {
  try {
    await importTool();
    post({ op: "loaded" });
  } catch (error) {
    post({ op: "loaded", error: describe(error) });
  }
}

async function call(message) {
  callId = message.id;
  logs = [];
  logUsed = 0;
  logDropped = 0;
  const context = ObjectFreeze({
    secrets: ObjectFreeze({ ...message.secrets }),
    request: ObjectFreeze(message.request),
    log: (...args) => record("info", args),
    callTool: (name, input) => request("callTool", { name, input: input ?? {} }),
    breadcrumbs: ObjectFreeze({
      create: (crumb) => request("breadcrumbs.create", { breadcrumb: crumb }),
      get: (id) => request("breadcrumbs.get", { id }),
      query: (query) => request("breadcrumbs.query", query ?? {}),
      update: (id, changes) => request("breadcrumbs.update", { id, changes }),
    }),
  });
  let json;
  let failure;
  watchMemory(message.id);
  let execute;
  try {
    execute = await importTool();
  } catch (error) {
    const problem = describe(error);
    post({ op: "result", id: message.id, error: { name: "LoadError", message: `${problem.name}: ${problem.message}` },
      logs, dropped: logDropped });
    return;
  }
  try {
    const value = await execute(message.input, context);
    try {
      json = apply(stringify, JSON, [value === undefined ? null : value]);
    } catch (error) {
      failure = { name: "ResultError", message: `execute returned a value that is not JSON: ${describe(error).message}` };
    }
    if (json !== undefined && json.length > maxResult) {
      failure = { name: "ResultTooLarge", message: `the result has ${json.length} characters, over the limit of ${maxResult}` };
      json = undefined;
    }
  } catch (error) {
    failure = describe(error);
  }
  // Object literals only: assignment could run setters a tool planted on Object.prototype.
  post({ op: "result", id: message.id, json, error: failure, logs, dropped: logDropped });
}

function answer(message) {
  const waiter = apply(mapGet, pending, [message.id]);
  if (!waiter) return;
  apply(mapDelete, pending, [message.id]);
  if (message.error) {
    const error = new ErrorCtor(message.error.message);
    error.name = message.error.name;
    waiter.reject(error);
  } else {
    waiter.resolve(message.value);
  }
}

// An isolate's first timer, dynamic import and memory reading cost about a millisecond together: they are paid
// here, while the isolate is a spare with no tool code in it, instead of by the call that takes it.
async function warmUp() {
  try {
    apply(memoryUsage, Deno, []);
    await new PromiseCtor((resolve) => apply(setTimeoutNative, globalThis, [resolve, 0]));
    await import("data:application/javascript,export%20default%200");
  } catch {
    // Only a saving: the call pays these costs itself.
  }
}

self.onmessage = async (event) => {
  const data = event.data;
  port = data.port;
  toolUrl = data.url;
  logLimit = data.logLimit;
  maxResult = data.maxResult;
  memoryLimit = data.memoryLimit;
  self.onmessage = null;
  port.onmessage = (inner) => {
    const message = inner.data;
    if (message.op === "call") call(message);
    else if (message.op === "check") check();
    else if (message.op === "reply") answer(message);
  };
  await warmUp();
  post({ op: "ready" });
};
