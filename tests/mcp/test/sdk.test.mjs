// hotkernel mcp driven by the official TypeScript SDK client (Client + StdioClientTransport):
// handshake, tools/list, tools/call, progress, cancellation, bad arguments, unknown tool/method.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, TOOL_NAMES, connect, writeScript, alive, sleep } from './helpers.mjs';

let conn;
before(async () => {
  assert.ok(existsSync(BIN), `hotkernel binary not found at ${BIN}; build it or set HOTKERNEL_BIN`);
  conn = await connect();
});
after(async () => { await conn?.client.close(); });

test('initialize: server info, tools capability only, instructions', () => {
  const { client } = conn;
  assert.equal(client.getServerVersion().name, 'hotkernel');
  // The wheel's version, from git tags (setuptools-scm's scheme, PEP 440): 0.1.dev266+g87c78df22, 0.2.0.
  assert.match(client.getServerVersion().version, /^\d+(\.\d+)+(\.dev\d+)?(\+g[0-9a-f]+(\.d\d{8})?)?$/);
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, 'tools capability');
  assert.equal(caps.logging, undefined, 'logging must not be advertised');
  const instructions = client.getInstructions();
  assert.ok(instructions.length > 100 && instructions.length < 2048, 'short instructions');
  assert.match(instructions, /verify/);
});

test('tools/list: every registry tool (the ten core ones in doc order), each with an object schema', async () => {
  const { tools } = await conn.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
  for (const t of tools) {
    assert.match(t.name, /^[A-Za-z0-9_.-]{1,128}$/);
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(typeof t.inputSchema.properties, 'object', t.name);
    assert.ok(t.description.length > 40 && t.description.length < 2048, `${t.name} description length`);
    if (t.outputSchema) assert.equal(t.outputSchema.type, 'object', t.name);
    assert.equal(typeof t.annotations?.readOnlyHint, 'boolean', t.name);
  }
});

test('tools/call roofline on a named H200 matches hand-computed values and the CLI', async () => {
  // H200 SXM: 989.4 dense bf16 TFLOPS, 4800 GB/s (the spec table). 2^40 flops over 384 MiB:
  // intensity 2730.7 flop/B, ridge 206.1, compute-bound, floor 2^40 / 989.4e12 s.
  const args = { gpu: 'NVIDIA H200', flops: 1099511627776, bytes: 402653184, dtype: 'bf16' };
  const r = await conn.client.callTool({ name: 'roofline', arguments: args });
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const s = r.structuredContent;
  // The text block is a short summary of the result, not the JSON again.
  const text = r.content[0].text;
  assert.throws(() => JSON.parse(text));
  assert.ok(text.length < 1024, `summary of ${text.length} chars`);
  assert.match(text, /bound: compute/);
  assert.match(text, /attainable_ms: /);
  const near = (got, want, what) => assert.ok(Math.abs(got - want) <= 0.01 * Math.abs(want), `${what}: ${got} vs ${want}`);
  assert.equal(s.bound, 'compute');
  near(s.peak_tflops, 989.4, 'peak_tflops');
  near(s.peak_mem_gbs, 4800, 'peak_mem_gbs');
  near(s.arithmetic_intensity, 1099511627776 / 402653184, 'arithmetic_intensity');
  near(s.ridge_point, 989.4e12 / 4800e9, 'ridge_point');
  near(s.attainable_tflops, 989.4, 'attainable_tflops');
  near(s.attainable_ms, 1099511627776 / 989.4e12 * 1e3, 'attainable_ms');

  // The memory-bound twin: 2^30 flops over 4 GiB.
  const m = (await conn.client.callTool({ name: 'roofline', arguments: { ...args, flops: 1073741824, bytes: 4294967296 } })).structuredContent;
  assert.equal(m.bound, 'memory');
  near(m.attainable_ms, 4294967296 / 4800e9 * 1e3, 'attainable_ms (memory)');
  near(m.attainable_tflops, 0.25 * 4.8, 'attainable_tflops (memory)');

  // Same numbers as the CLI (one registry, two front ends).
  const cli = spawnSync(BIN, ['roofline', '--gpu', 'NVIDIA H200', '--flops', '1099511627776', '--bytes', '402653184',
    '--dtype', 'bf16', '--json'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), s);
});

test('gpu_info through MCP equals the CLI (a result on a GPU machine, the same error without one)', async () => {
  const r = await conn.client.callTool({ name: 'gpu_info', arguments: {} });
  const cli = spawnSync(BIN, ['gpu-info', '--json'], { encoding: 'utf8', env: process.env });
  if (cli.status === 0) {
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.deepEqual(r.structuredContent, JSON.parse(cli.stdout));
    assert.ok(r.structuredContent.gpus.length >= 1);
  } else {
    assert.equal(cli.status, 1, cli.stderr);
    assert.equal(r.isError, true, JSON.stringify(r));
    // The same error, each naming the gpu parameter its own way.
    const text = r.content[0].text;
    assert.ok(text.includes('gpu: "NVIDIA H200"'), text);
    assert.ok(!text.includes('--gpu'), text);
    assert.equal(`hotkernel: error: ${text.replace('gpu: "NVIDIA H200"', '--gpu "NVIDIA H200"')}`, cli.stderr.trim());
  }
});

test('bad arguments are tool errors (isError), not protocol errors', async () => {
  for (const [name, args] of [
    ['roofline', { gpu: 'NVIDIA H200', flops: 1, bytes: 1, dtype: 'fp99' }],
    ['roofline', { gpu: 'NVIDIA H200', flops: -5, bytes: 1 }],
    ['roofline', { gpu: 'NVIDIA H200', bytes: 1 }],
    ['roofline', { gpu: 'NVIDIA H200', flops: 'many', bytes: 1 }],
    ['roofline', { gpu: 'no such gpu 9000', flops: 1, bytes: 1 }],
    ['bench', { script: '/nonexistent/x.py', n: 1 }],
    ['bench', { script: 'x.py', n: -1 }],
    ['bench', { script: 'x.py', iters: 5 }],
  ]) {
    const r = await conn.client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} -> ${JSON.stringify(r)}`);
    assert.equal(r.structuredContent, undefined);
    assert.ok(r.content[0].text.length > 10, 'the message says what to fix');
  }
});

test('unknown tool is JSON-RPC -32602', async () => {
  await assert.rejects(conn.client.callTool({ name: 'no_such_tool', arguments: {} }),
    (e) => e.code === -32602 && /Unknown tool/.test(e.message));
});

test('unknown method is JSON-RPC -32601', async () => {
  await assert.rejects(conn.client.request({ method: 'hotkernel/nope', params: {} }, EmptyResultSchema),
    (e) => e.code === -32601);
  await assert.rejects(conn.client.request({ method: 'resources/list', params: {} }, EmptyResultSchema),
    (e) => e.code === -32601);
});

test('ping', async () => {
  assert.deepEqual(await conn.client.ping(), {});
});

test('progress: a long bench call reports increasing progress, then its result', async () => {
  const script = writeScript('sleepy.py', "import time\ntime.sleep(1)\nprint('{\"ms\": 1.0}')\n");
  const seen = [];
  const r = await conn.client.callTool({ name: 'bench', arguments: { script, n: 4, timeout_s: 30 } }, undefined,
    { onprogress: (p) => seen.push(p), timeout: 60000 });
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(r.structuredContent.n, 4);
  assert.ok(seen.length >= 2, `expected progress notifications, got ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'strictly increasing');
  for (const p of seen) if (p.total !== undefined) assert.ok(p.progress < p.total, 'no terminal progress==total');
  assert.deepEqual(conn.errors, []);
});

test('cancel: AbortSignal stops the call and kills its child process', async () => {
  const pidFile = writeScript('pids.txt', '');
  const script = writeScript('forever.py',
    `import os, time\nopen(${JSON.stringify(pidFile)}, 'a').write(str(os.getpid()) + '\\n')\ntime.sleep(60)\nprint('{"ms": 1.0}')\n`);
  const ac = new AbortController();
  const started = Date.now();
  const p = conn.client.callTool({ name: 'bench', arguments: { script, n: 3, timeout_s: 120 } }, undefined,
    { signal: ac.signal, timeout: 120000, onprogress: () => {} });
  let pid;
  while (!pid && Date.now() - started < 15000) {
    await sleep(100);
    pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]) || undefined;
  }
  assert.ok(pid, 'the benched script started');
  assert.ok(alive(pid));
  ac.abort('test cancel');  // the SDK sends notifications/cancelled
  await assert.rejects(p);
  const deadline = Date.now() + 6000;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  assert.equal(alive(pid), false, `child ${pid} still running after cancel`);
  // The server is alive, and sent nothing for the cancelled id (the SDK would report an unknown id).
  await sleep(500);
  assert.deepEqual(await conn.client.ping(), {});
  assert.deepEqual(conn.errors, []);
  assert.equal(readFileSync(pidFile, 'utf8').trim().split('\n').length, 1, 'no further run started after cancel');
});
