"""What the gpu-info and roofline tests share: the binary run with only the fake nvidia-smi
(tests/fixtures/fake-bin) on PATH, tools/list from `hotkernel mcp`, and a checker that a result
matches its tool's output schema."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel"))
FAKE_BIN = ROOT / "tests" / "fixtures" / "fake-bin"
H200_UUID = "GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c"


def run_with_fake_smi(*args, scenario="h200", fake=True, env=None, tmp_path=None, timeout=60, binary=None, cwd=None):
    """Runs the binary with only the fake nvidia-smi (or none: fake=False) reachable on PATH.
    Returns (exit code, stdout, stderr, the argv lists the fake saw)."""
    full = dict(os.environ)
    # The fake's `#!/usr/bin/env python3` needs a python3; the binary needs nothing else on PATH.
    full["PATH"] = (str(FAKE_BIN) + os.pathsep if fake else "") + str(Path(sys.executable).parent)
    full["FAKE_NVIDIA_SMI_SCENARIO"] = scenario
    log = None
    if tmp_path is not None:
        log = tmp_path / "fake-calls.log"
        full["FAKE_NVIDIA_SMI_LOG"] = str(log)
        full["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    full.update(env or {})
    p = subprocess.run([binary or BIN, *args], capture_output=True, timeout=timeout, env=full, cwd=cwd)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log and log.exists() else []
    return p.returncode, p.stdout.decode(), p.stderr.decode(), calls


class McpSession:
    """`hotkernel mcp` over stdio, initialised, for one test: request() sends and waits for the
    answer with that id; a watchdog kills the server if the whole session runs past `timeout`."""

    def __init__(self, *extra_args, env=None, timeout=60):
        full = dict(os.environ)
        full.update(env or {})
        self.proc = subprocess.Popen([BIN, "mcp", *extra_args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=full, text=True)
        self.watchdog = threading.Timer(timeout, self.proc.kill)
        self.watchdog.start()
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "0"}})
        self.notify("notifications/initialized")

    def _send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def notify(self, method, params=None):
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def request(self, method, params=None):
        msg_id = self.next_id
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})})
        while True:
            line = self.proc.stdout.readline()
            assert line, "hotkernel mcp closed stdout before answering %s" % method
            m = json.loads(line)
            if m.get("id") == msg_id:
                return m

    def call(self, tool, arguments):
        """The tools/call result object (structuredContent, content, isError)."""
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def close(self, wait_s=30):
        """Ends the session the way a client does (stdin closed) and waits for the server."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=wait_s)
        finally:
            self.watchdog.cancel()
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tools_list():
    """tools/list from `hotkernel mcp`, by tool name."""
    with McpSession(timeout=30) as s:
        return {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}


def declared_output_schemas():
    """Every tool's declared result schema, by name (tools/list carries only bench's and verify's)."""
    r = subprocess.run([BIN, "list-tools", "--output-schemas"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
              "integer": int, "number": (int, float)}


def check_schema(value, schema, where="result"):
    """The subset of JSON Schema the output schemas use: type (or list), properties, required,
    items, enum. Every key a result has must be declared, so schema and result cannot drift."""
    types = schema.get("type")
    if types:
        types = types if isinstance(types, list) else [types]
        ok = any(isinstance(value, JSON_TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
                 and not (t == "integer" and isinstance(value, float) and not value.is_integer()) for t in types)
        assert ok, f"{where}: {value!r} is not of type {types}"
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    if isinstance(value, dict) and "properties" in schema:
        for k in schema.get("required", []):
            assert k in value, f"{where}: required key {k!r} missing"
        for k, v in value.items():
            assert k in schema["properties"], f"{where}: key {k!r} is not in the output schema"
            check_schema(v, schema["properties"][k], f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            check_schema(v, schema["items"], f"{where}[{i}]")
