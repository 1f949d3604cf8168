#!/usr/bin/env node
/**
 * An MCP server for the tests, on stdio, built on the SDK's server side.
 * Started by the runtime as an agent's `mcp_servers` entry:
 *
 *   node tests/helpers/mcp-test-server.mjs [--fail-start] [--many-tools N] [--big-schema] [--tool-prefix P]
 *
 * --tool-prefix P puts P before every tool's name (listed and called).
 *
 * Tools: echo {text}; env {name} (the value of an environment variable it
 * got); slow {ms} (answers after ms; writes its pid, and the pid of a child
 * it started, to $MCP_TEST_PID_FILE first); hang (never answers); crash
 * (exits); picture (an image and a text part). --fail-start writes to
 * stderr and exits 3 before speaking MCP.
 */
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
if (argv.includes('--fail-start')) {
  process.stderr.write('test server: refusing to start (--fail-start)\n');
  process.exit(3);
}
const many = argv.includes('--many-tools') ? Number(argv[argv.indexOf('--many-tools') + 1]) : 0;
const big = argv.includes('--big-schema');
const prefix = argv.includes('--tool-prefix') ? argv[argv.indexOf('--tool-prefix') + 1] : '';

const obj = (props, required = []) => ({ type: 'object', properties: props, required });
const tools = [
  // Listed out of order on purpose: the runtime offers them sorted.
  { name: 'slow', description: 'Answers after ms milliseconds.', inputSchema: obj({ ms: { type: 'number' } }, ['ms']) },
  { name: 'echo', description: 'Echoes text back.', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  // With LEAK_IN_DESCRIPTION set, its description carries $TOKEN (a server that leaks a secret into what the model reads).
  { name: 'env', description: `The value of one of its environment variables.${process.env.LEAK_IN_DESCRIPTION ? ` Token: ${process.env.TOKEN}` : ''}`, inputSchema: obj({ name: { type: 'string' } }, ['name']) },
  { name: 'hang', description: 'Never answers.', inputSchema: obj({}) },
  { name: 'crash', description: 'Exits at once.', inputSchema: obj({}) },
  { name: 'picture', description: 'An image and a caption.', inputSchema: obj({}) },
  { name: 'bad.name', description: 'A name the model APIs refuse.', inputSchema: obj({}) },
];
for (let i = 0; i < many; i++) tools.push({ name: `t${String(i).padStart(5, '0')}`, description: `generated tool ${i}`, inputSchema: obj({ x: { type: 'string' } }) });
if (big) tools.unshift({ name: 'huge', description: 'A very large schema.', inputSchema: obj({ x: { type: 'string', description: 'x'.repeat(500_000) } }) });

const server = new Server({ name: 'openboa-test', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => ({ ...t, name: prefix + t.name })) }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const a = req.params.arguments ?? {};
  const name = req.params.name.startsWith(prefix) ? req.params.name.slice(prefix.length) : `(no prefix) ${req.params.name}`;
  switch (name) {
    case 'echo':
      return { content: [{ type: 'text', text: `echo: ${a.text}` }] };
    case 'env':
      return { content: [{ type: 'text', text: process.env[String(a.name)] ?? '(unset)' }] };
    case 'slow': {
      const pidFile = process.env.MCP_TEST_PID_FILE;
      if (pidFile) {
        const child = spawn('sleep', ['600'], { stdio: 'ignore' });
        fs.writeFileSync(pidFile, JSON.stringify({ server: process.pid, child: child.pid }));
      }
      await new Promise((r) => setTimeout(r, Number(a.ms)));
      return { content: [{ type: 'text', text: `slept ${a.ms} ms` }] };
    }
    case 'hang':
      return new Promise(() => {});
    case 'crash':
      process.stderr.write('test server: crashing on request\n');
      process.exit(7);
      break;
    case 'picture':
      return { content: [{ type: 'text', text: 'a red dot' }, { type: 'image', data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' }] };
    default:
      return { content: [{ type: 'text', text: `no tool ${req.params.name}` }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
