// The supervisor of one Deno worker process.
//
// It connects back to the node over a loopback TCP socket (stdin/stdout are
// not used: a tool isolate could read fd 0 through node:fs), says hello with
// the nonce it was started with, and then runs tools, each call in a fresh
// tool isolate: a Web Worker created with the tool's own permissions, which
// imports the tool's module when the call arrives and is terminated the
// moment the call ends (result, error, timeout, memory limit or cancel), so
// no timer, interval or promise of a finished call keeps running.  Spare
// isolates (bootstrapped, tool not yet imported) are kept per tool so a call
// rarely waits for a Worker to start.  `new Worker()` blocks this thread while
// the Worker's runtime starts (10-15 ms of CPU); starting them from a helper
// Worker instead would free this thread, but Deno 2.9 delivers the messages
// of a Worker started by a Worker only every 500 ms, so they start here and
// the node adds processes when one process cannot start them fast enough.
//
// Protocol: one JSON object per line in both directions.
//   node -> supervisor: init, load, unload, call, cancel, reply
//   supervisor -> node: hello, loaded, result, request
// Arguments: PORT NONCE

type Json = Record<string, unknown>;

interface Tool {
  url: string;
  permissions: Deno.PermissionOptionsObject;
  memoryLimit: number;
  spares: Isolate[];
  starting: Isolate[];
  refill?: ReturnType<typeof setTimeout>;
  // Calls of this tool in flight, and the most in flight at once since `peakAt`: spares are kept for that many.
  inflight: number;
  peak: number;
  peakAt: number;
}

interface Isolate {
  // Deno numbers the Workers a process creates 1, 2, … and names each one's thread `worker-<n>`.
  id: number;
  worker: Worker;
  port: MessagePort;
  tool: string;
  ready: Promise<Json | undefined>;
  call?: string;
  checked?: (error: Json | undefined) => void;
  retired?: boolean;
}

interface Running {
  isolate: Isolate;
  timer: ReturnType<typeof setTimeout>;
  timing: Timing;
}

// When each phase of a call happened, in milliseconds since the epoch (the
// node turns them into trace spans of the call: the isolate, then the run).
interface Timing {
  received: number;
  warm: boolean;
  ready?: number;
  posted?: number;
  finished?: number;
}

const now = (): number => performance.timeOrigin + performance.now();
const MIB = 1024 * 1024;
// Importing a module whose top level never settles must not hold up loading forever.
const CHECK_TIMEOUT_MS = 10000;
const REFILL_QUIET_MS = 5;
// How long a tool's busiest moment sizes its spares: past it, a quiet tool keeps one spare (each holds 6-7 MiB).
const PEAK_MS = 10000;

const [portArg, nonce] = Deno.args;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(portArg) });
// Several small messages go out per call (a result, the retired isolate): Nagle's algorithm would hold
// the second until the node's delayed ACK, 40 ms later.
conn.setNoDelay(true);
const writer = conn.writable.getWriter();

const tools = new Map<string, Tool>();
const running = new Map<string, Running>();
let isolateSource = "";
let isolateUrl = "";
let logLimit = 65536;
let maxIdle = 2;
let maxResult = 1048576;
let spawned = 0;

function send(message: Json): void {
  writer.write(encoder.encode(JSON.stringify(message) + "\n")).catch(() => Deno.exit(70));
}

function spawn(name: string, tool: Tool): Isolate {
  const worker = new Worker(isolateUrl, { type: "module", deno: { permissions: tool.permissions } });
  const channel = new MessageChannel();
  let started!: (value: Json | undefined) => void;
  const ready = new Promise<Json | undefined>((resolve) => (started = resolve));
  const isolate: Isolate = { id: ++spawned, worker, port: channel.port1, tool: name, ready };
  // Anything a tool posts on `self` arrives here; the real protocol uses the private port.
  worker.onmessage = () => {};
  worker.onerror = (event) => {
    event.preventDefault();
    const message = event.message ?? "uncaught error";
    started({ name: "LoadError", message });
    isolate.checked?.({ name: "LoadError", message });
    crash(isolate, message);
  };
  channel.port1.onmessage = (event) => {
    const data = event.data as Json;
    if (data.op === "ready") started(undefined);
    else if (data.op === "loaded") isolate.checked?.(data.error as Json | undefined);
    else if (data.op === "result") finish(isolate, data);
    else if (data.op === "request") send({ ...data, op: "request" });
    else if (data.op === "memory") overran(isolate, data.held as number);
  };
  worker.postMessage(
    { port: channel.port2, url: tool.url, logLimit, maxResult, memoryLimit: tool.memoryLimit },
    [channel.port2],
  );
  return isolate;
}

function retire(isolate: Isolate): void {
  if (isolate.retired) return;
  isolate.retired = true;
  isolate.port.onmessage = null;
  isolate.worker.terminate();
  // terminate() does not stop JavaScript that never yields (a busy loop, endless microtasks): the node
  // watches for the isolate's thread and recycles this process if the thread outlives a grace period.
  send({ op: "retired", worker: isolate.id });
  const tool = tools.get(isolate.tool);
  if (tool) tool.spares = tool.spares.filter((other) => other !== isolate);
}

// As many spares as the tool recently had calls in flight at once: at least one, at most `maxIdle`.
function wanted(tool: Tool): number {
  if (performance.now() - tool.peakAt > PEAK_MS) {
    tool.peak = tool.inflight;
    tool.peakAt = performance.now();
  }
  return Math.min(maxIdle, Math.max(1, tool.peak));
}

// Keep the wanted number of fresh spares per tool; resolves once the ones started now are ready.
function replenish(name: string): Promise<unknown> {
  const tool = tools.get(name);
  const started: Promise<unknown>[] = [];
  const target = tool ? wanted(tool) : 0;
  while (tool && tool.spares.length > target) retire(tool.spares.shift()!);
  while (tool && tool.spares.length + tool.starting.length < target) {
    const isolate = spawn(name, tool);
    tool.starting.push(isolate);
    started.push(isolate.ready.then((error) => {
      const waiting = tool.starting.includes(isolate);
      tool.starting = tool.starting.filter((other) => other !== isolate);
      if (!waiting) return; // a call took it while it started
      if (error || tools.get(name) !== tool || tool.spares.length >= target) retire(isolate);
      else if (!isolate.retired) tool.spares.push(isolate);
    }));
  }
  return Promise.all(started);
}

// new Worker() blocks this thread while the isolate's runtime starts (10-40 ms), delaying every message
// in and out: spares are started only once the process has been quiet for a moment.
function refillLater(name: string): void {
  const tool = tools.get(name);
  if (!tool) return;
  clearTimeout(tool.refill);
  tool.refill = setTimeout(() => replenish(name), REFILL_QUIET_MS);
}

// Every way a call ends goes through here: the answer is sent and the isolate is gone.
function end(id: string, answer: Json): void {
  const entry = running.get(id);
  if (!entry) return;
  running.delete(id);
  clearTimeout(entry.timer);
  const tool = tools.get(entry.isolate.tool);
  if (tool) tool.inflight = Math.max(0, tool.inflight - 1);
  retire(entry.isolate);
  send({ op: "result", id, ...answer, timing: { ...entry.timing, finished: now() } });
  refillLater(entry.isolate.tool);
}

function finish(isolate: Isolate, data: Json): void {
  const id = data.id as string;
  if (running.get(id)?.isolate !== isolate) return;
  end(id, { json: data.json, error: data.error, logs: data.logs, dropped: data.dropped });
}

function crash(isolate: Isolate, message: string): void {
  retire(isolate);
  if (isolate.call !== undefined && running.get(isolate.call)?.isolate === isolate) {
    end(isolate.call, { error: { name: "Crash", message } });
  }
}

function overran(isolate: Isolate, held: number): void {
  const tool = tools.get(isolate.tool);
  if (isolate.call === undefined || running.get(isolate.call)?.isolate !== isolate) return;
  const limit = Math.round((tool?.memoryLimit ?? 0) / MIB);
  end(isolate.call, {
    error: {
      name: "MemoryLimit",
      message: `the call held ${Math.round(held / MIB)} MiB (V8 heap and array buffers), over its limit of ${limit} MiB`,
    },
  });
}

function stop(id: string, name: string, message: string): void {
  end(id, { error: { name, message } });
}

async function check(isolate: Isolate): Promise<Json | undefined> {
  const error = await isolate.ready;
  if (error) return error;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const imported = new Promise<Json | undefined>((resolve) => {
    isolate.checked = resolve;
    timer = setTimeout(() => resolve({
      name: "LoadError",
      message: `importing the module did not finish within ${CHECK_TIMEOUT_MS} ms (its top level never settles)`,
    }), CHECK_TIMEOUT_MS);
  });
  isolate.port.postMessage({ op: "check" });
  const result = await imported;
  clearTimeout(timer);
  return result;
}

async function load(message: Json): Promise<void> {
  const name = message.tool as string;
  const mime = message.language === "typescript" ? "application/typescript" : "application/javascript";
  const bytes = encoder.encode(message.source as string);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  const previous = tools.get(name);
  const tool: Tool = {
    url: `data:${mime};base64,${btoa(binary)}`,
    permissions: message.permissions as Deno.PermissionOptionsObject,
    memoryLimit: (message.memory_mb as number) * MIB,
    spares: [],
    starting: [],
    inflight: 0,
    peak: 0,
    peakAt: performance.now(),
  };
  tools.set(name, tool);
  previous?.spares.splice(0).forEach(retire);
  previous?.starting.splice(0).forEach(retire);
  // The check imports the module (its top level runs), so that isolate never serves a call.
  const checker = spawn(name, tool);
  const error = await check(checker);
  retire(checker);
  send({ op: "loaded", tool: name, error });
  // Spares start after the answer: a node loading many tools is ready sooner; a call arriving first starts its own.
  if (!error) refillLater(name);
}

async function call(message: Json): Promise<void> {
  const id = message.id as string;
  const name = message.tool as string;
  const tool = tools.get(name);
  if (!tool) {
    send({ op: "result", id, error: { name: "LoadError", message: `tool ${name} is not loaded in this worker` } });
    return;
  }
  const timing: Timing = { received: now(), warm: tool.spares.length > 0 };
  clearTimeout(tool.refill);
  tool.inflight++;
  if (tool.inflight >= tool.peak) {
    tool.peak = tool.inflight;
    tool.peakAt = performance.now();
  }
  // A spare still starting is closer to ready than a Worker started now.
  const isolate = tool.spares.pop() ?? tool.starting.shift() ?? spawn(name, tool);
  isolate.call = id;
  const timeout = message.timeout_ms as number;
  const timer = setTimeout(
    () => stop(id, "Timeout", `the call did not finish within ${timeout} ms`),
    timeout,
  );
  running.set(id, { isolate, timer, timing });
  const error = await isolate.ready;
  if (running.get(id)?.isolate !== isolate) return;
  timing.ready = now();
  if (error) {
    stop(id, "LoadError", (error.message as string) ?? "the tool could not be loaded");
    return;
  }
  timing.posted = now();
  isolate.port.postMessage({
    op: "call",
    id,
    input: message.input,
    secrets: message.secrets ?? {},
    request: message.request ?? {},
  });
}

function reply(message: Json): void {
  const entry = running.get(message.call as string);
  if (entry) entry.isolate.port.postMessage({ op: "reply", id: message.id, value: message.value, error: message.error });
}

function dispatch(message: Json): void {
  switch (message.op) {
    case "init":
      isolateSource = message.isolate as string;
      isolateUrl = URL.createObjectURL(new Blob([isolateSource], { type: "application/javascript" }));
      logLimit = (message.log_limit as number) ?? logLimit;
      maxIdle = (message.max_idle as number) ?? maxIdle;
      maxResult = (message.max_result as number) ?? maxResult;
      break;
    case "load":
      load(message);
      break;
    case "unload": {
      const tool = tools.get(message.tool as string);
      tools.delete(message.tool as string);
      tool?.spares.splice(0).forEach(retire);
      tool?.starting.splice(0).forEach(retire);
      break;
    }
    case "call":
      call(message);
      break;
    case "cancel":
      stop(message.id as string, "Cancelled", "the call was cancelled");
      break;
    case "reply":
      reply(message);
      break;
  }
}

send({ op: "hello", nonce });

let buffer = "";
for await (const chunk of conn.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline = buffer.indexOf("\n");
  while (newline >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (line) dispatch(JSON.parse(line));
    newline = buffer.indexOf("\n");
  }
}
// The node closed the connection: this worker process is done.
Deno.exit(0);
