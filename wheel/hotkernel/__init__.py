"""hotkernel from a wheel: the native binary, found for `python -m hotkernel` and for code.

The wheel installs the binary itself as the `hotkernel` script (no Python runs in between, so
`hotkernel mcp` answers at native speed); this package only finds it.
"""

import os
import sys
import sysconfig

__all__ = ["find_hotkernel_bin"]


def find_hotkernel_bin() -> str:
    """The path of the hotkernel binary this package was installed with."""
    name = "hotkernel"
    candidates = [os.path.join(sysconfig.get_path("scripts"), name)]
    # A `pip install --user` puts scripts in the user scheme's folder.
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), name))
    # A `pip install --target DIR`: DIR/bin beside DIR/hotkernel.
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", name))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    sys.stderr.write("hotkernel: the hotkernel binary is not installed beside this package; looked in:\n  "
                     + "\n  ".join(candidates) + "\nreinstall the wheel: pip install --force-reinstall hotkernel\n")
    raise FileNotFoundError(candidates[0])
