"""hotkernel mcp driven by the official MCP Python SDK client (`mcp` from PyPI, pinned in
scripts/requirements-mcp-python.txt): the handshake, tools/list, tools/call through the fake
runner, progress, cancellation that keeps the warm fork server, and the bad requests no client
may wait on (written as raw lines where the SDK cannot send them), each answered with its
request's id and a bounded error.

Run: HOTKERNEL_BIN=build/hotkernel /opt/hotkernel-dev/mcp-sdk/bin/python -m pytest -q tests/mcp-python
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp import types

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HOTKERNEL_BIN", ROOT / "build" / "hotkernel")).resolve()
# The interpreter `bench` runs the scripts with; they need no torch.
PYTHON = os.environ.get("HOTKERNEL_TEST_PYTHON") or shutil.which("python3") or sys.executable
MAX_ECHO = 200  # bytes of a value an error may echo
MAX_ERROR = 1200  # a whole error text: the echo, the parameter, the fix

pytestmark = pytest.mark.skipif(not BIN.exists(), reason=f"no hotkernel binary at {BIN}; build it or set HOTKERNEL_BIN")


def env_for(**extra):
    env = {"HOTKERNEL_PYTHON": PYTHON, "HOME": os.environ.get("HOME", "/root"), "PATH": os.environ.get("PATH", "")}
    env.update(extra)
    return env


@asynccontextmanager
async def connect(**extra_env):
    params = StdioServerParameters(command=str(BIN), args=["mcp"], env=env_for(**extra_env))
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def run(coro_fn):
    return anyio.run(coro_fn)


def scratch(name, text):
    d = Path(tempfile.mkdtemp(prefix="hk-mcp-py-"))
    p = d / name
    p.write_text(text)
    return p


def registry_names():
    r = subprocess.run([str(BIN), "list-tools"], capture_output=True, text=True, check=True)
    return [t["name"] for t in json.loads(r.stdout)["tools"]]


# ---- the SDK's own calls ------------------------------------------------------------------


def test_initialize_and_tools_list():
    async def main():
        async with connect() as s:
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == registry_names()
            by = {t.name: t for t in tools}
            for t in tools:
                assert t.input_schema["type"] == "object", t.name
                assert t.annotations is not None, t.name
            # Tools that run the user's code are never read-only (a client may auto-approve those).
            for name in ("bench", "verify", "torch_profile", "profile", "new"):
                assert by[name].annotations.read_only_hint is False, name
            for name in ("gpu_info", "top_kernels", "disassemble"):
                assert by[name].annotations.read_only_hint is True, name
            # roofline writes a picture when asked to plot: not read-only, but the same answer each time
            assert by["roofline"].annotations.read_only_hint is False
            assert by["roofline"].annotations.idempotent_hint is True
            # Arrays are arrays; bounds are exact.
            assert by["bench"].input_schema["properties"]["args"]["type"] == "array"
            assert by["roofline"].input_schema["properties"]["bytes"]["exclusiveMinimum"] == 0
            assert by["roofline"].input_schema["properties"]["gpu"]["maxLength"] == 256
            with pytest.raises(MCPError) as e:
                await s.list_tools(params=types.PaginatedRequestParams(cursor="not-one-of-ours"))
            assert e.value.code == -32602
            assert "cursor" in e.value.message

    run(main)


def fake_script():
    return scratch("fake.json", json.dumps({
        "seed": 0,
        "programs": {"nvidia-smi": {"spawn_failed": True}},
        "scripts": {"k.py": {"ms": {"mean": 2.0, "sd": 0.01}, "sleep_s": 0.5, "line": {"ok": True, "iters": 1}}},
    }))


def test_a_call_through_the_fake_runner_reports_progress_then_its_result():
    script = scratch("k.py", "print('never run: the fake runner answers')\n")
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total))

    async def main():
        async with connect(HOTKERNEL_FAKE_RUNNER=str(fake_script())) as s:
            r = await s.call_tool("bench", {"script": str(script), "n": 6, "warm": False},
                                  read_timeout_seconds=240, progress_callback=on_progress)
            assert r.is_error is False, r.content
            assert abs(r.structured_content["mean_ms"] - 2.0) < 0.1
            assert len(seen) >= 2, seen
            assert all(b[0] > a[0] for a, b in zip(seen, seen[1:])), "progress strictly increases"
            assert all(t is None or p < t for p, t in seen), "no terminal progress == total"

    run(main)


def test_an_array_sent_as_a_string_is_refused():
    async def main():
        async with connect() as s:
            r = await s.call_tool("bench", {"script": "x.py", "args": "x,y"})
            assert r.is_error is True
            assert "array" in r.content[0].text

    run(main)


def test_a_10_mib_argument_is_answered_at_once_and_bounded():
    huge = "x" * (10 << 20)

    async def main():
        async with connect() as s:
            # Longer than any parameter's maxLength: refused before the message is parsed.
            for name, args in (("roofline", {"gpu": huge, "flops": 1, "bytes": 1}),
                               ("roofline", {"gpu": "h200_sxm", "flops": 1, "bytes": 1, "dtype": huge}),
                               (huge, {})):
                with pytest.raises(MCPError) as e:
                    await s.call_tool(name, args, read_timeout_seconds=30)  # speed: bench/mcp_bounds.py
                assert e.value.code == -32602
                assert len(e.value.message) < MAX_ERROR
                assert "x" * (MAX_ECHO + 1) not in e.value.message
            # Within the line's bound but past the parameter's: a tool error that cuts what it echoes.
            r = await s.call_tool("roofline", {"gpu": "y" * 3000, "flops": 1, "bytes": 1})
            assert r.is_error is True
            text = r.content[0].text
            assert "256" in text and len(text) < MAX_ERROR, text
            assert "y" * (MAX_ECHO + 1) not in text

    run(main)


def forever_script(pids):
    # Writes its parent (the fork server, when forked warm) and hangs.
    return scratch("forever.py", f"import os, time\nopen({str(pids)!r}, 'a').write(f'{{os.getpid()}} {{os.getppid()}}\\n')\n"
                                 "time.sleep(60)\nprint('{\"ms\": 1.0}')\n")


def parent_script(out):
    return scratch("quick.py", f"import os\nopen({str(out)!r}, 'a').write(f'{{os.getppid()}}\\n')\nprint('{{\"ms\": 1.0}}')\n")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_cancellation_stops_the_run_and_the_pool_stays_warm():
    d = Path(tempfile.mkdtemp(prefix="hk-mcp-py-"))
    pids, parents = d / "pids.txt", d / "parents.txt"
    pids.write_text("")
    hang = forever_script(pids)
    quick = parent_script(parents)
    quick2 = quick.parent / "quick2.py"  # its own folder keeps the fork server's cwd the same
    hang2 = quick.parent / "forever.py"
    hang2.write_text(hang.read_text())

    async def main():
        async with connect() as s:
            first = await s.call_tool("bench", {"script": str(quick), "n": 1}, read_timeout_seconds=300)
            assert first.is_error is False, first.content
            server = parents.read_text().split()[0]
            cmdline = Path(f"/proc/{server}/cmdline").read_bytes()
            assert b"hotkernel_forkserver.py" in cmdline, f"the first bench's run was not forked warm: {cmdline!r}"
            # A bench that hangs, cancelled by the SDK (anyio cancel scope -> notifications/cancelled).
            with anyio.move_on_after(60) as scope:
                async with anyio.create_task_group() as tg:
                    async def call():
                        await s.call_tool("bench", {"script": str(hang2), "n": 3, "timeout_s": 120},
                                          read_timeout_seconds=120)
                    tg.start_soon(call)
                    while not pids.read_text().strip():
                        await anyio.sleep(0.1)
                    tg.cancel_scope.cancel()
            assert not scope.cancelled_caught, "the hanging script never started"
            pid, parent = map(int, pids.read_text().split()[:2])
            assert str(parent) == server, "the cancelled run was not forked from the warm server"
            deadline = time.monotonic() + 8
            while alive(pid) and time.monotonic() < deadline:
                await anyio.sleep(0.1)
            assert not alive(pid), f"run {pid} still alive after the cancel"
            # The next call forks from the same, still warm, server.
            quick2.write_text(quick.read_text())
            nxt = await s.call_tool("bench", {"script": str(quick2), "n": 1}, read_timeout_seconds=120)
            assert nxt.is_error is False, nxt.content
            assert set(parents.read_text().split()) == {server}, "cancellation ended the warm fork server"
            assert pids.read_text().count("\n") == 1, "the cancelled bench started no further run"
            await s.send_ping()

    run(main)


# ---- raw lines the SDK cannot send --------------------------------------------------------


class Raw:
    """`hotkernel mcp` with bytes written to its stdin and JSON lines read from its stdout."""

    def __init__(self):
        self.p = subprocess.Popen([str(BIN), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env_for())

    def send(self, data: bytes):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def answer(self):
        line = self.p.stdout.readline()
        assert line, "the server closed stdout"
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=10) == 0


def call_line(id_, arguments_json: bytes, name=b"roofline"):
    return (b'{"jsonrpc":"2.0","id":' + json.dumps(id_).encode() + b',"method":"tools/call","params":{"name":"' + name +
            b'","arguments":' + arguments_json + b"}}\n")


def bounded(msg):
    text = json.dumps(msg)
    assert len(text) < MAX_ERROR + 300, text[:300]


@pytest.fixture
def raw():
    r = Raw()
    yield r
    if r.p.poll() is None:
        r.p.kill()
        r.p.wait()


def test_a_lone_surrogate_is_read_as_the_replacement_character(raw):
    # JavaScript's JSON.stringify of a string cut inside an emoji.
    raw.send(call_line("sur", b'{"gpu":"cut \\ud83d","flops":1,"bytes":1}'))
    r = raw.answer()
    assert r["id"] == "sur"
    assert r["result"]["isError"] is True
    assert "\ufffd" in r["result"]["content"][0]["text"]
    raw.close()


def test_invalid_utf8_out_of_range_numbers_and_bad_json_get_the_request_id(raw):
    raw.send(call_line(41, b'{"gpu":"\xff\xfe","flops":1,"bytes":1}'))
    r = raw.answer()
    assert (r["id"], r["error"]["code"]) == (41, -32700)
    assert "UTF-8" in r["error"]["message"]
    raw.send(call_line("n", b'{"gpu":"h200_sxm","flops":1e999,"bytes":1}'))
    r = raw.answer()
    assert (r["id"], r["error"]["code"]) == ("n", -32700)
    assert "out of range" in r["error"]["message"]
    raw.send(b'{"jsonrpc":"2.0","id":"cut","method":"tools/list",\n')
    r = raw.answer()
    assert (r["id"], r["error"]["code"]) == ("cut", -32700)
    for m in (r,):
        bounded(m)
    raw.close()


def test_an_oversized_line_is_answered_with_its_id_and_the_limit(raw):
    raw.send(call_line("huge", b'{"gpu":"' + b"x" * (17 << 20) + b'","flops":1,"bytes":1}'))
    r = raw.answer()
    assert (r["id"], r["error"]["code"]) == ("huge", -32600)
    assert "16 MiB" in r["error"]["message"]
    bounded(r)
    raw.send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
    assert raw.answer() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    raw.close()
