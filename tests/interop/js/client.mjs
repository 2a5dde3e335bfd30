// An A2A 1.0 client on @a2a-js/sdk that speaks only gRPC, driven by the interop tests.
//
//   node client.mjs TARGET
//
// TARGET is an http(s) URL, whose agent card is fetched and must offer a GRPC interface (the
// client knows no other binding), or a gRPC address HOST:PORT, for which a card with that one
// GRPC interface stands in. Once the client exists it prints {"ready": true, "transport":
// the class name of the SDK transport it chose}, or {"error": {...}} and exits 1.
//
// Then it reads requests, one JSON line each, from stdin, and runs each as it comes (a cancel
// can overtake a stream still open):
//   {"id": "1", "op": "send" | "stream" | "get" | "list" | "cancel" | "subscribe" | "card",
//    "params": {... the request in the A2A JSON form ...}, "headers": {"name": "value"}}
// and answers with JSON lines carrying the request's id:
//   {"id": "1", "event": {... a StreamResponse ...}}  each event of a stream, as it arrives;
//   {"id": "1", "result": ...}                        the answer (null when a stream ends);
//   {"id": "1", "error": {"name", "reason", "status", "message"}}  the error the SDK raised.
// The headers go out as gRPC metadata (the SDK's service parameters). It exits once stdin
// closes and every request has been answered.

import { createInterface } from 'node:readline';
import {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

function write(line) {
  process.stdout.write(JSON.stringify(line) + '\n');
}

function errorOf(error) {
  return {
    name: error?.name ?? 'Error',
    reason: error?.reason ?? '',
    status: error?.status ?? error?.code ?? null,
    message: String(error?.message ?? error),
  };
}

// SendMessage answers a Task or a Message; the JSON form says which, as the wire does.
function sendResult(result) {
  const $case = 'status' in result ? 'task' : 'message';
  return SendMessageResponse.toJSON({ payload: { $case, value: result } });
}

const operations = {
  send: async (client, params, options) =>
    sendResult(await client.sendMessage(SendMessageRequest.fromJSON(params), options)),
  stream: (client, params, options) =>
    client.sendMessageStream(SendMessageRequest.fromJSON(params), options),
  subscribe: (client, params, options) =>
    client.resubscribeTask(SubscribeToTaskRequest.fromJSON(params), options),
  get: async (client, params, options) =>
    Task.toJSON(await client.getTask(GetTaskRequest.fromJSON(params), options)),
  list: async (client, params, options) =>
    ListTasksResponse.toJSON(await client.listTasks(ListTasksRequest.fromJSON(params), options)),
  cancel: async (client, params, options) =>
    Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON(params), options)),
  card: async (client, params, options) => AgentCard.toJSON(await client.getAgentCard(options)),
};
const streaming = new Set(['stream', 'subscribe']);

async function answer(client, request) {
  const { id, op, params = {}, headers = {} } = request;
  const run = operations[op];
  if (run === undefined) {
    write({ id, error: { name: 'UsageError', reason: '', status: null, message: `no op ${op}` } });
    return;
  }
  const options = { serviceParameters: headers };
  try {
    if (streaming.has(op)) {
      for await (const event of run(client, params, options)) {
        write({ id, event: StreamResponse.toJSON(event) });
      }
      write({ id, result: null });
    } else {
      write({ id, result: await run(client, params, options) });
    }
  } catch (error) {
    write({ id, error: errorOf(error) });
  }
}

async function connect(target) {
  // Not ClientFactoryOptions.default, whose JSON-RPC and HTTP+JSON transports would serve a
  // card that lists them beside gRPC.
  const factory = new ClientFactory({ transports: [new GrpcTransportFactory()] });
  if (/^https?:\/\//.test(target)) {
    return factory.createFromUrl(target);
  }
  return factory.createFromAgentCard(
    AgentCard.fromJSON({
      name: target,
      description: 'a gRPC address',
      version: '1.0.0',
      supportedInterfaces: [{ url: target, protocolBinding: 'GRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
    }),
  );
}

let client;
try {
  client = await connect(process.argv[2]);
} catch (error) {
  write({ error: errorOf(error) });
  process.exit(1);
}
write({ ready: true, transport: client.transport.constructor.name });

const pending = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim()) {
    pending.push(answer(client, JSON.parse(line)));
  }
}
await Promise.all(pending);
process.exit(0);
