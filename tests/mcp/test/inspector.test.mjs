// Smoke calls through the MCP Inspector CLI (@modelcontextprotocol/inspector --cli), run with
// npx from this folder's node_modules (no network): tools/list, tools/call roofline, modern era.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { BIN, MCP_DIR, TOOL_NAMES } from './helpers.mjs';

function inspector(args) {
  const r = spawnSync('npx', ['--no-install', '@modelcontextprotocol/inspector', '--cli', BIN, 'mcp', ...args, '--format', 'json'], {
    cwd: MCP_DIR,
    encoding: 'utf8',
    timeout: 90000,
    env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory', npm_config_update_notifier: 'false' },
  });
  assert.equal(r.error, undefined, String(r.error));
  return { status: r.status, json: r.stdout.trim() ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

test('inspector --cli: initialize negotiates 2025-11-25', () => {
  const r = inspector(['--method', 'initialize']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.result.protocolVersion, '2025-11-25');
  assert.equal(r.json.result.serverInfo.name, 'hotkernel');
});

test('inspector --cli: tools/list (with --strict schema lint)', () => {
  const r = inspector(['--method', 'tools/list', '--strict']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.json.result.tools.map((t) => t.name), TOOL_NAMES);
});

test('inspector --cli: tools/call roofline', () => {
  const r = inspector(['--method', 'tools/call', '--tool-name', 'roofline', '--tool-arg', 'gpu=NVIDIA H200',
    '--tool-arg', 'flops=1099511627776', '--tool-arg', 'bytes=402653184', '--tool-arg', 'dtype=bf16']);
  assert.equal(r.status, 0, r.stderr);
  const s = r.json.result.structuredContent;
  assert.equal(s.bound, 'compute');
  assert.ok(Math.abs(s.attainable_ms - 1099511627776 / 989.4e12 * 1e3) < 0.01 * s.attainable_ms, String(s.attainable_ms));
});

test('inspector --cli: a tool error exits 5 with isError', () => {
  const r = inspector(['--method', 'tools/call', '--tool-name', 'roofline', '--tool-arg', 'gpu=NVIDIA H200',
    '--tool-arg', 'flops=1', '--tool-arg', 'bytes=1', '--tool-arg', 'dtype=fp99']);
  assert.equal(r.status, 5, r.stderr);
  assert.equal(r.json.result.isError, true);
});

test('inspector --cli --protocol-era modern: server/discover then stateless tools/list', () => {
  const r = spawnSync('npx', ['--no-install', '@modelcontextprotocol/inspector', '--cli', '--protocol-era', 'modern', BIN, 'mcp',
    '--method', 'tools/list', '--format', 'json'], {
    cwd: MCP_DIR, encoding: 'utf8', timeout: 90000, env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).result.tools.map((t) => t.name), TOOL_NAMES);
});
