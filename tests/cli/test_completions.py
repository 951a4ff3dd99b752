# Shell completions and the man page, generated from the registry: each shell completes what a
# user types (driven through the shell itself: bash's completion function, fish's `complete -C`,
# zsh in a pseudo-terminal), every tool and flag is in each, and the man page renders cleanly.
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_support import BIN  # noqa: E402

SHELL_DIR = Path(__file__).resolve().parent / "shell"


def script(shell, tmp_path):
    p = subprocess.run([BIN, "completions", shell], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    f = tmp_path / ("_hotkernel" if shell == "zsh" else "hotkernel." + shell)
    f.write_text(p.stdout)
    return f


def registry():
    p = subprocess.run([BIN, "list-tools"], capture_output=True, text=True, timeout=30)
    return json.loads(p.stdout)["tools"]


def kebab(name):
    return name.replace("_", "-")


def need(program):
    if shutil.which(program) is None:
        pytest.fail("%s is not installed: scripts/install-deps.sh shells installs it" % program)


def bash_complete(f, words):
    """What bash's completion function offers for `words` (the last one is being typed)."""
    need("bash")
    line = " ".join("'%s'" % w for w in words)
    code = ('source %s; COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _hotkernel; '
            'printf "%%s\\n" "${COMPREPLY[@]}"' % (f, line))
    p = subprocess.run(["bash", "--norc", "-c", code], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def fish_complete(f, line):
    need("fish")
    p = subprocess.run(["fish", "--no-config", "-c", "source %s; complete -C '%s'" % (f, line)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return [row.split("\t")[0] for row in p.stdout.splitlines()]


def zsh_complete(f, line):
    need("zsh")
    p = subprocess.run(["zsh", "-f", str(SHELL_DIR / "zsh_capture.zsh"), str(f), line],
                       capture_output=True, text=True, timeout=60)
    words = []
    for row in p.stdout.splitlines():
        if row.startswith("CAP:") and "${" not in row:
            words += row[4:].split()
    return words


def test_bash_completes_commands_flags_and_their_values(tmp_path):
    f = script("bash", tmp_path)
    assert "verify" in bash_complete(f, ["hotkernel", "ver"])
    assert bash_complete(f, ["hotkernel", "verify", "--de"]) == ["--detail"]
    assert bash_complete(f, ["hotkernel", "verify", "--detail", ""]) == ["lean", "full"]
    assert bash_complete(f, ["hotkernel", "new", "--dtype", ""]) == ["bf16", "fp16", "fp32"]
    assert bash_complete(f, ["hotkernel", "verify", "--n", ""]) == []  # a number: nothing to offer
    assert set(bash_complete(f, ["hotkernel", "completions", ""])) == {"bash", "zsh", "fish"}
    # A global option's value is skipped when finding the command: this is verify's flag.
    assert bash_complete(f, ["hotkernel", "--python", "python3", "verify", "--fail"]) == ["--fail-on"]
    assert "--no-warm" in bash_complete(f, ["hotkernel", "bench", "--no-"])
    # Files where a path goes.
    (tmp_path / "gelu_baseline.py").write_text("")
    assert str(tmp_path / "gelu_baseline.py") in bash_complete(f, ["hotkernel", "verify", str(tmp_path / "gelu_b")])


def test_fish_completes_commands_flags_and_their_values(tmp_path):
    f = script("fish", tmp_path)
    assert "verify" in fish_complete(f, "hotkernel ver")
    assert fish_complete(f, "hotkernel verify --de") == ["--detail"]
    assert sorted(fish_complete(f, "hotkernel verify --detail ")) == ["full", "lean"]
    assert sorted(fish_complete(f, "hotkernel completions ")) == ["bash", "fish", "zsh"]
    assert "--no-warm" in fish_complete(f, "hotkernel bench --no-")


def test_zsh_completes_flags_and_their_values(tmp_path):
    f = script("zsh", tmp_path)
    subprocess.run(["zsh", "-n", str(f)], check=True, timeout=30)
    assert "--detail" in zsh_complete(f, "hotkernel verify --de")
    assert {"lean", "full"} <= set(zsh_complete(f, "hotkernel verify --detail "))
    assert {"bf16", "fp16", "fp32"} <= set(zsh_complete(f, "hotkernel new --dtype "))
    assert {"bash", "zsh", "fish"} <= set(zsh_complete(f, "hotkernel completions "))


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_tool_and_flag_is_in_each_script(shell, tmp_path):
    text = script(shell, tmp_path).read_text()
    for t in registry():
        assert kebab(t["name"]) in text, (shell, t["name"])
        for p in t["inputSchema"]["properties"]:
            flag = kebab(p)
            assert ("--" + flag) in text or ("-l " + flag) in text, (shell, t["name"], p)


def test_an_unknown_shell_is_a_usage_error_that_names_the_shells():
    p = subprocess.run([BIN, "completions", "tcsh"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "'tcsh'" in p.stderr and "bash, zsh, fish" in p.stderr


def test_the_man_page_renders_without_warnings_and_documents_every_flag(tmp_path):
    need("groff")
    page = tmp_path / "hotkernel.1"
    page.write_text(subprocess.run([BIN, "man"], capture_output=True, text=True, timeout=30, check=True).stdout)
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", str(page)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # The rendered text: no overstrike (bold is "X\bX"), hyphens as typed, words re-joined across lines.
    text = re.sub(".\x08", "", r.stdout)
    shown = " ".join(text.replace("\u2010", "-").replace("\u2212", "-").split())
    for t in registry():
        assert "hotkernel " + kebab(t["name"]) in shown, t["name"]
        for p in t["inputSchema"]["properties"]:
            assert "--" + kebab(p) in shown, (t["name"], p)
    for needle in ("--json", "--python PYTHON", "EXIT STATUS", "hotkernel completions", "hotkernel mcp"):
        assert needle in shown, needle
