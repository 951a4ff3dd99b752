"""`python -m hotkernel ...`: the binary, with this interpreter as the one that runs your kernels.

Scripts run in the interpreter named by --python, else $HOTKERNEL_PYTHON, else python3 on PATH;
started as `python -m hotkernel`, the interpreter that started it is the natural one, so it is
set as $HOTKERNEL_PYTHON unless one is already set.
"""

import os
import sys

from hotkernel import find_hotkernel_bin


def main() -> None:
    try:
        binary = find_hotkernel_bin()
    except FileNotFoundError:
        sys.exit(1)
    env = dict(os.environ)
    env.setdefault("HOTKERNEL_PYTHON", sys.executable)
    os.execve(binary, [binary, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
