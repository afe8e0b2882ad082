// The supervisor of one Deno worker process.
//
// It connects back to the node over a loopback TCP socket (stdin/stdout are
// not used: a tool isolate could read fd 0 through node:fs), says hello with
// the nonce it was started with, and then runs tools, each call in a tool
// isolate: a Web Worker created with the tool's own permissions.  Idle
// isolates are kept warm per tool.  A call that overruns its timeout gets its
// isolate terminated and a fresh one takes its place.
//
// Protocol: one JSON object per line in both directions.
//   node -> supervisor: init, load, unload, call, cancel, reply
//   supervisor -> node: hello, loaded, result, request
// Arguments: PORT NONCE

type Json = Record<string, unknown>;

interface Tool {
  url: string;
  permissions: Deno.PermissionOptionsObject;
  idle: Isolate[];
}

interface Isolate {
  worker: Worker;
  port: MessagePort;
  tool: string;
  ready: Promise<Json | undefined>;
  call?: string;
}

interface Running {
  isolate: Isolate;
  timer: number;
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

const [portArg, nonce] = Deno.args;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(portArg) });
const writer = conn.writable.getWriter();

const tools = new Map<string, Tool>();
const running = new Map<string, Running>();
let isolateSource = "";
let isolateUrl = "";
let logLimit = 65536;
let maxIdle = 2;
let maxResult = 1048576;

function send(message: Json): void {
  writer.write(encoder.encode(JSON.stringify(message) + "\n")).catch(() => Deno.exit(70));
}

function spawn(name: string, tool: Tool): Isolate {
  const worker = new Worker(isolateUrl, { type: "module", deno: { permissions: tool.permissions } });
  const channel = new MessageChannel();
  let loaded!: (value: Json | undefined) => void;
  const ready = new Promise<Json | undefined>((resolve) => (loaded = resolve));
  const isolate: Isolate = { worker, port: channel.port1, tool: name, ready };
  // Anything a tool posts on `self` arrives here; the real protocol uses the private port.
  worker.onmessage = () => {};
  worker.onerror = (event) => {
    event.preventDefault();
    const message = event.message ?? "uncaught error";
    loaded({ name: "LoadError", message });
    crash(isolate, message);
  };
  channel.port1.onmessage = (event) => {
    const data = event.data as Json;
    if (data.op === "loaded") loaded(data.error as Json | undefined);
    else if (data.op === "result") finish(isolate, data);
    else if (data.op === "request") send({ ...data, op: "request" });
  };
  worker.postMessage({ port: channel.port2, url: tool.url, logLimit, maxResult }, [channel.port2]);
  return isolate;
}

function retire(isolate: Isolate): void {
  isolate.port.onmessage = null;
  isolate.worker.terminate();
}

function finish(isolate: Isolate, data: Json): void {
  const id = data.id as string;
  const entry = running.get(id);
  if (!entry || entry.isolate !== isolate) return;
  running.delete(id);
  clearTimeout(entry.timer);
  isolate.call = undefined;
  send({
    op: "result", id, json: data.json, error: data.error, logs: data.logs, dropped: data.dropped,
    timing: { ...entry.timing, finished: now() },
  });
  const tool = tools.get(isolate.tool);
  if (tool && tool.idle.length < maxIdle) tool.idle.push(isolate);
  else retire(isolate);
}

function crash(isolate: Isolate, message: string): void {
  retire(isolate);
  const tool = tools.get(isolate.tool);
  if (tool) tool.idle = tool.idle.filter((other) => other !== isolate);
  const id = isolate.call;
  if (id === undefined) return;
  const entry = running.get(id);
  if (!entry) return;
  running.delete(id);
  clearTimeout(entry.timer);
  send({ op: "result", id, error: { name: "Crash", message }, timing: { ...entry.timing, finished: now() } });
}

function stop(id: string, name: string, message: string): void {
  const entry = running.get(id);
  if (!entry) return;
  running.delete(id);
  clearTimeout(entry.timer);
  retire(entry.isolate);
  send({ op: "result", id, error: { name, message }, timing: { ...entry.timing, finished: now() } });
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
  if (previous) previous.idle.splice(0).forEach(retire);
  const tool: Tool = {
    url: `data:${mime};base64,${btoa(binary)}`,
    permissions: message.permissions as Deno.PermissionOptionsObject,
    idle: [],
  };
  tools.set(name, tool);
  const isolate = spawn(name, tool);
  const error = await isolate.ready;
  if (error) {
    retire(isolate);
  } else {
    tool.idle.push(isolate);
  }
  send({ op: "loaded", tool: name, error });
}

async function call(message: Json): Promise<void> {
  const id = message.id as string;
  const name = message.tool as string;
  const tool = tools.get(name);
  if (!tool) {
    send({ op: "result", id, error: { name: "LoadError", message: `tool ${name} is not loaded in this worker` } });
    return;
  }
  const timing: Timing = { received: now(), warm: tool.idle.length > 0 };
  const isolate = tool.idle.pop() ?? spawn(name, tool);
  isolate.call = id;
  const timeout = message.timeout_ms as number;
  const timer = setTimeout(
    () => stop(id, "Timeout", `the call did not finish within ${timeout} ms`),
    timeout,
  );
  running.set(id, { isolate, timer, timing });
  const error = await isolate.ready;
  if (!running.has(id)) return;
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
      tool?.idle.splice(0).forEach(retire);
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
