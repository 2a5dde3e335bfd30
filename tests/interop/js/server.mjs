// An A2A 1.0 agent on @a2a-js/sdk that serves only gRPC, for the interop tests.
//
// It binds 127.0.0.1 on the port given as the first argument (0 or none: any free port) and
// prints one JSON line, {"address": "127.0.0.1:PORT", "card": {...}}, once it listens: its
// card has one GRPC interface, as a gRPC-only partner's card has, in the JSON form.
//
// What it does with a message:
//   "wait ..."  the task goes working and stays there until it is canceled;
//   "fail ..."  the task goes working, then fails with the text as its status message;
//   otherwise   the text comes back as one artifact, a word per artifact-update chunk, and
//               the task completes: one-shot callers get the whole artifact, streaming
//               callers see each chunk.
// It stops on SIGTERM or when its stdin closes (so it never outlives the test that ran it).

import { Server, ServerCredentials } from '@grpc/grpc-js';
import {
  AgentCard,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { A2AService, UserBuilder, grpcService } from '@a2a-js/sdk/server/grpc';

function textOf(message) {
  return (message?.parts ?? [])
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('');
}

function status(taskId, contextId, state, text) {
  const update = { taskId, contextId, status: { state, timestamp: new Date().toISOString() } };
  if (text !== undefined) {
    update.status.message = {
      messageId: crypto.randomUUID(),
      role: 'ROLE_AGENT',
      parts: [{ text }],
      taskId,
      contextId,
    };
  }
  return AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON(update));
}

class Executor {
  // The tasks that wait for a cancel, each with the function that ends its wait.
  waiting = new Map();

  async execute(requestContext, bus) {
    const { taskId, contextId, userMessage } = requestContext;
    const text = textOf(userMessage);
    let task = requestContext.task;
    if (task === undefined) {
      task = Task.fromJSON({
        id: taskId,
        contextId,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
      });
      task.history = [userMessage];
    }
    bus.publish(AgentEvent.task(task));
    bus.publish(status(taskId, contextId, 'TASK_STATE_WORKING', 'working'));
    if (text.startsWith('wait')) {
      await new Promise((resolve) => this.waiting.set(taskId, resolve));
      bus.publish(status(taskId, contextId, 'TASK_STATE_CANCELED', 'canceled'));
      return;
    }
    if (text.startsWith('fail')) {
      bus.publish(status(taskId, contextId, 'TASK_STATE_FAILED', text));
      return;
    }
    const words = text.split(/(?<= )/);
    words.forEach((word, index) => {
      bus.publish(
        AgentEvent.artifactUpdate(
          TaskArtifactUpdateEvent.fromJSON({
            taskId,
            contextId,
            artifact: { artifactId: `${taskId}-echo`, name: 'echo', parts: [{ text: word }] },
            append: index > 0,
            lastChunk: index === words.length - 1,
          }),
        ),
      );
    });
    bus.publish(status(taskId, contextId, 'TASK_STATE_COMPLETED'));
  }

  async cancelTask(taskId) {
    const release = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    release?.();
  }
}

// The card, its interface's address filled in once the server has bound its port.
function card() {
  return AgentCard.fromJSON({
    name: 'JS gRPC agent',
    description: 'Echoes text word by word, fails on "fail", waits for a cancel on "wait".',
    version: '1.0.0',
    supportedInterfaces: [{ url: '', protocolBinding: 'GRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'echo',
        description: 'Echoes text back, a word per chunk.',
        tags: ['echo'],
      },
    ],
  });
}

const agentCard = card();
const handler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), new Executor());
const server = new Server();
server.addService(
  A2AService,
  grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);
const port = await new Promise((resolve, reject) =>
  server.bindAsync(
    `127.0.0.1:${process.argv[2] ?? 0}`,
    ServerCredentials.createInsecure(),
    (error, bound) => (error ? reject(error) : resolve(bound)),
  ),
);
const address = `127.0.0.1:${port}`;
agentCard.supportedInterfaces[0].url = address;
process.stdout.write(JSON.stringify({ address, card: AgentCard.toJSON(agentCard) }) + '\n');

function stop() {
  server.forceShutdown();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
