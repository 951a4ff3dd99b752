// Shared helpers for the hotkernel MCP end-to-end tests: where the binary is, an SDK client
// connected to `hotkernel mcp`, a raw line-oriented child for protocol-level tests.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const MCP_DIR = path.resolve(here, '..');
// HOTKERNEL_BIN (absolute, or relative to the current directory); default ../../build/hotkernel from tests/mcp.
export const BIN = process.env.HOTKERNEL_BIN
  ? path.resolve(process.env.HOTKERNEL_BIN)
  : path.resolve(MCP_DIR, '../../build/hotkernel');
// The interpreter `bench` runs scripts with; the scripts here need no torch.
export const PYTHON = process.env.HOTKERNEL_TEST_PYTHON ?? 'python3';

// The ten tools of the product brief, in doc order; the registry may hold more between them.
export const CORE_TOOLS = ['gpu_info', 'roofline', 'new', 'bench', 'verify', 'record',
  'torch_profile', 'profile', 'top_kernels', 'disassemble'];

/** Tool names as the CLI's registry dump lists them (`hotkernel list-tools`): MCP must match. */
function registryNames() {
  const r = spawnSync(BIN, ['list-tools'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${BIN} list-tools failed (${r.status}): ${r.stderr}`);
  const names = JSON.parse(r.stdout).tools.map((t) => t.name);
  let at = 0;  // the core tools must all be there, in doc order
  for (const name of names) if (name === CORE_TOOLS[at]) at++;
  if (at !== CORE_TOOLS.length) throw new Error(`registry lacks ${CORE_TOOLS[at]} (or has it out of order): ${names}`);
  return names;
}
export const TOOL_NAMES = registryNames();

/** An SDK Client connected over stdio; `errors` collects transport/protocol errors it reports. */
export async function connect(extraEnv = {}) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp'],
    env: { ...process.env, HOTKERNEL_PYTHON: PYTHON, ...extraEnv },
    stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(d.toString()));
  const client = new Client({ name: 'hotkernel-e2e', version: '0.0.0' });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, transport, errors, stderr };
}

/** A scratch folder holding a Python script with the given text; returns the script's path. */
export function writeScript(name, text) {
  const dir = mkdtempSync(path.join(tmpdir(), 'hk-mcp-'));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** True while a process with this pid exists (zombies included). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `hotkernel mcp` as a raw child: send(line) writes bytes, next() resolves with the next stdout
 * line parsed as JSON (rejecting on a non-JSON line), lines keeps every raw stdout line.
 */
const rawChildren = new Set();
/** Kills raw servers a failed test left running, so the test file can still finish. */
export function killRawServers() {
  for (const c of rawChildren) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export function rawServer(extraEnv = {}) {
  const child = spawn(BIN, ['mcp'], {
    env: { ...process.env, HOTKERNEL_PYTHON: PYTHON, ...extraEnv },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  rawChildren.add(child);
  const lines = [];
  const queue = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  child.stdout.on('data', (d) => {
    buf += d.toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(line);
      let item;
      try { item = { msg: JSON.parse(line) }; } catch (e) { item = { err: new Error(`non-JSON line on stdout: ${line}`) }; }
      const w = waiters.shift();
      if (w) w(item); else queue.push(item);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    lines,
    exited,
    get stderr() { return stderr; },
    get pendingBytes() { return buf.length; },
    send(text) { child.stdin.write(text); },
    request(obj) { child.stdin.write(JSON.stringify(obj) + '\n'); },
    next(timeoutMs = 10000) {
      const item = queue.shift();
      const p = item ? Promise.resolve(item) : new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('timed out waiting for a line on stdout')), timeoutMs);
        waiters.push((it) => { clearTimeout(t); resolve(it); });
      });
      return p.then((it) => { if (it.err) throw it.err; return it.msg; });
    },
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}
