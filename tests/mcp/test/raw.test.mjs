// hotkernel mcp at the byte level (raw child_process, no SDK): malformed JSON and bad bytes
// answered with their ids, 1,000 garbage lines, CRLF, the 2026-07-28 path, stdout purity and exit on stdin EOF.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rawServer, TOOL_NAMES, writeScript, alive, killRawServers } from './helpers.mjs';

after(killRawServers);

const init = (id, version = '2025-11-25') => ({ jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });

test('version negotiation over the wire', async () => {
  const s = rawServer();
  for (const [v, want] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'], ['2023-01-01', '2025-11-25'], ['2026-07-28', '2025-11-25']]) {
    s.request(init(v, v));
    const r = await s.next();
    assert.equal(r.id, v);
    assert.equal(r.result.protocolVersion, want, v);
  }
  assert.deepEqual(await s.close(), { code: 0, signal: null });
});

test('malformed JSON is -32700 with the id it holds, and the server keeps serving', async () => {
  const s = rawServer();
  s.send('{"jsonrpc":"2.0","id":1,"method":"initialize",\n');
  let r = await s.next();
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, 1);
  s.send('{"jsonrpc":"2.0","method":"initialize",\n');
  r = await s.next();
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);  // no id to be read
  s.send('[{"jsonrpc":"2.0","id":2,"method":"ping"}]\n');
  r = await s.next();
  assert.equal(r.error.code, -32600);
  assert.equal(r.id, null);
  s.send('"just a string"\n');
  assert.equal((await s.next()).error.code, -32600);
  s.request(init(3));
  assert.equal((await s.next()).result.protocolVersion, '2025-11-25');
  s.request({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'roofline', arguments: [1, 2] } });
  r = await s.next();
  assert.equal(r.id, 4);
  assert.equal(r.error.code, -32602);
  s.request({ jsonrpc: '2.0', id: 5, method: 'prompts/list' });
  assert.equal((await s.next()).error.code, -32601);
  assert.deepEqual(await s.close(), { code: 0, signal: null });
});

test('bad bytes, 1e999, a lone surrogate, a 10 MiB argument and a 17 MiB line are answered with their ids', async () => {
  const s = rawServer();
  const call = (id, args) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call",` +
    `"params":{"name":"roofline","arguments":${args}}}`;
  s.child.stdin.write(Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":"u8","method":"tools/call","params":{"name":"roofline","arguments":{"gpu":"'),
    Buffer.from([0xff, 0xfe]), Buffer.from('","flops":1,"bytes":1}}}\n')]));
  let r = await s.next();
  assert.deepEqual([r.id, r.error.code], ['u8', -32700]);
  assert.match(r.error.message, /UTF-8/);
  s.send(call('big', '{"gpu":"h200_sxm","flops":1e999,"bytes":1}') + '\n');
  r = await s.next();
  assert.deepEqual([r.id, r.error.code], ['big', -32700]);
  // JSON.stringify of a string cut inside an emoji: served, the lone half read as U+FFFD.
  s.request({ jsonrpc: '2.0', id: 'sur', method: 'tools/call',
    params: { name: 'roofline', arguments: { gpu: '\ud83d', flops: 1, bytes: 1 } } });
  r = await s.next();
  assert.equal(r.id, 'sur');
  assert.equal(r.result.isError, true);
  assert.ok(r.result.content[0].text.includes('\ufffd'), r.result.content[0].text);
  s.request({ jsonrpc: '2.0', id: 'ten', method: 'tools/call',
    params: { name: 'roofline', arguments: { gpu: 'x'.repeat(10 << 20), flops: 1, bytes: 1 } } });
  r = await s.next(30000);
  assert.deepEqual([r.id, r.error.code], ['ten', -32602]);  // longer than any parameter's maxLength
  assert.ok(JSON.stringify(r).length < 1500, JSON.stringify(r).slice(0, 300));
  s.send(call('huge', `{"gpu":"${'x'.repeat(17 << 20)}"}`) + '\n');
  r = await s.next(30000);
  assert.deepEqual([r.id, r.error.code], ['huge', -32600]);
  assert.match(r.error.message, /16 MiB/);
  s.request({ jsonrpc: '2.0', id: 'after', method: 'ping' });
  assert.deepEqual((await s.next()).result, {});
  assert.deepEqual(await s.close(), { code: 0, signal: null });
});

test('1,000 garbage lines do not kill the server', async () => {
  const s = rawServer();
  const garbage = [];
  for (let i = 0; i < 1000; i++) {
    const kind = i % 5;
    let line;
    if (kind === 0) line = randomBytes(1 + (i % 200)).toString('latin1');
    else if (kind === 1) line = randomBytes(1 + (i % 300)).toString('base64');
    else if (kind === 2) line = '{"jsonrpc":"2.0","id":' + i + ',"method":';
    else if (kind === 3) line = '['.repeat(i) + ']'.repeat(i >> 1);
    else line = JSON.stringify({ jsonrpc: '2.0', method: 'x/' + i, params: 'p' }).slice(0, 10 + (i % 40));
    garbage.push(line.replace(/[\r\n]/g, ' '));
  }
  s.send(garbage.join('\n') + '\n');
  s.request({ jsonrpc: '2.0', id: 'alive', method: 'ping' });
  let r;
  let answered = 0;
  do { r = await s.next(); answered++; } while (r.id !== 'alive');
  assert.deepEqual(r.result, {});
  assert.ok(answered > 500, `garbage lines were answered with errors (${answered})`);
  s.request({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
  r = await s.next();
  assert.deepEqual(r.result.tools.map((t) => t.name), TOOL_NAMES);
  assert.deepEqual(await s.close(), { code: 0, signal: null });
});

test('CRLF line endings and blank lines are accepted', async () => {
  const s = rawServer();
  s.send('\r\n\r\n' + JSON.stringify(init(1)) + '\r\n' + JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) + '\r\n');
  assert.equal((await s.next()).id, 1);
  assert.deepEqual((await s.next()).result, {});
  await s.close();
});

test('modern 2026-07-28 path: server/discover, per-request _meta, -32022', async () => {
  const s = rawServer();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  s.request({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: meta } });
  let r = await s.next();
  assert.equal(r.result.resultType, 'complete');
  assert.deepEqual(r.result.supportedVersions, ['2026-07-28']);
  assert.ok(r.result.capabilities.tools);
  assert.equal(r.result._meta['io.modelcontextprotocol/serverInfo'].name, 'hotkernel');
  s.request({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
  r = await s.next();
  assert.equal(r.result.resultType, 'complete');
  assert.ok(r.result.ttlMs > 0);
  assert.equal(r.result.cacheScope, 'public');
  assert.deepEqual(r.result.tools.map((t) => t.name), TOOL_NAMES);
  s.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: meta, name: 'roofline',
    arguments: { gpu: 'h200_sxm', flops: 1e12, bytes: 1e9 } } });
  r = await s.next();
  assert.equal(r.result.resultType, 'complete');
  assert.equal(r.result.structuredContent.bound, 'compute');
  s.request({ jsonrpc: '2.0', id: 3, method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-12-31' } } });
  r = await s.next();
  assert.equal(r.error.code, -32022);
  assert.equal(r.error.data.requested, '2099-12-31');
  assert.ok(r.error.data.supported.includes('2026-07-28'));
  await s.close();
});

test('stdout carries only JSON-RPC messages, even when tools and children print', async () => {
  const noisy = writeScript('noisy.py',
    "import sys\nprint('hello from the user script')\nprint('\\x1b[31mcolour\\x1b[0m', file=sys.stderr)\nprint('{\"ms\": 2.0}')\n");
  const s = rawServer();
  const ids = [];
  const send = (obj) => { s.request(obj); if (obj.id !== undefined) ids.push(obj.id); };
  send(init(1));
  s.request({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'bench', arguments: { script: noisy, n: 2 },
    _meta: { progressToken: 'p3' } } });
  send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'gpu_info', arguments: {} } });
  send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'roofline', arguments: { gpu: 'bogus', flops: 1, bytes: 1 } } });
  send({ jsonrpc: '2.0', id: 6, method: 'logging/setLevel', params: { level: 'debug' } });
  const byId = new Map();
  while (byId.size < ids.length) {
    const m = await s.next(60000);
    assert.equal(m.jsonrpc, '2.0');
    if (m.id !== undefined) byId.set(m.id, m);
    else assert.equal(m.method, 'notifications/progress');
  }
  assert.deepEqual(await s.close(), { code: 0, signal: null });
  assert.equal(s.pendingBytes, 0, 'no partial line left on stdout');
  for (const line of s.lines) {
    const m = JSON.parse(line);  // every line is one JSON-RPC message
    assert.equal(m.jsonrpc, '2.0');
    assert.ok(!line.includes('hello from the user script'));
  }
  const bench = byId.get(3).result;
  assert.notEqual(bench.isError, true, JSON.stringify(bench));
  assert.equal(bench.structuredContent.mean_ms, 2.0);
  // gpu_info on a machine without a GPU is a clean tool error; with one it is a result.
  assert.ok(byId.get(4).result, JSON.stringify(byId.get(4)));
  assert.equal(byId.get(5).result.isError, true);
  assert.deepEqual(byId.get(6).result, {});
});

test('exits 0 promptly on stdin EOF, even with a call running', async () => {
  const slow = writeScript('slow.py', "import time\ntime.sleep(60)\nprint('{\"ms\": 1.0}')\n");
  const s = rawServer();
  s.request(init(1));
  await s.next();
  s.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bench', arguments: { script: slow, n: 1, timeout_s: 120 } } });
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  const exit = await s.close();
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.ok(Date.now() - t0 < 6000, `took ${Date.now() - t0} ms to exit`);
  assert.equal(s.lines.length, 1, 'nothing written for the abandoned call');
});

test('SIGTERM stops the server and the running call\'s child process', async () => {
  const pidFile = writeScript('pids.txt', '');
  const script = writeScript('forever.py',
    `import os, time\nopen(${JSON.stringify(pidFile)}, 'a').write(str(os.getpid()) + '\\n')\ntime.sleep(60)\n`);
  const s = rawServer();
  s.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench', arguments: { script, n: 1, timeout_s: 120 } } });
  let pid;
  for (let i = 0; i < 150 && !pid; i++) {
    await new Promise((r) => setTimeout(r, 100));
    pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]) || undefined;
  }
  assert.ok(pid, 'the script started');
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  assert.deepEqual(exit, { code: 0, signal: null });
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(pid), false, `child ${pid} survived the server's SIGTERM`);
});
