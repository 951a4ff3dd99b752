"""The harness's half of the parent's clock (the other half, and the wire, is
src/measure/parent_clock.h in hotkernel).

Every timed sample is released by hotkernel, outside the candidate's process: the harness says
"ready", hotkernel answers "go" with a fresh secret and starts its own clock, the sample's
inputs are mixed with the secret, the calls run, and the harness's "done" stops hotkernel's
clock. Whatever the candidate does to the harness's own clock, the result's sample times cannot
fall below what hotkernel saw, less the fixed cost of a sample that the empty samples, timed
before the candidate was imported, measure.

Embedded in the binary beside the harness (never vendored into a target).
"""
import builtins as _shared_builtins
__builtins__ = dict(vars(_shared_builtins))  # this module's own builtins (hotkernel_defences.own_builtins says why)
import functools
import os
import select
import socket
import time

WIRE_VERSION = 1
# The harness spins this long for a release before it blocks: a blocked thread on an idle vCPU
# can take milliseconds to wake, inside the parent's window (the parent answers in microseconds
# once its own thread is awake).
SPIN_S = 0.05


class ParentClockError(Exception):
    pass


class Release:
    """A connection to hotkernel's clock; None-safe no-op when the run has none (run by hand)."""

    def __init__(self, address):
        self._fd = None
        if not address:
            return
        # SOCK_SEQPACKET: the kernel stamps each message as it is sent (the parent's SO_TIMESTAMPNS).
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(address)
        except OSError as e:
            s.close()
            raise ParentClockError("could not reach the parent's clock at %s: %s" % (address, e))
        self._fd = s.detach()  # a plain descriptor: os.read/os.write, nothing to patch on an object
        # What the descriptor is: a candidate can dup2 a socket of its own over the number and
        # relay (and rewrite) every message (cheats/process_vm_clock.py); replaced() compares.
        self._fstat = os.fstat
        st = self._fstat(self._fd)
        self._ident = (st.st_dev, st.st_ino)
        self._write = os.write
        self._read = os.read
        self._clock = time.monotonic
        self._poller = select.poll()  # poll, not select: any descriptor number
        self._poller.register(self._fd, select.POLLIN)
        self._set_blocking = os.set_blocking
        self._send("hello %d" % WIRE_VERSION)

    @property
    def active(self):
        return self._fd is not None

    def replaced(self):
        """Why the connection's descriptor is no longer the socket connected (another file put
        over its number), or None. The harness asks before each release and after each done."""
        if self._fd is None:
            return None
        try:
            st = self._fstat(self._fd)
        except OSError as e:
            return "its descriptor %d was closed (%s)" % (self._fd, e.strerror)
        if (st.st_dev, st.st_ino) != self._ident:
            return "another file was put over its descriptor %d" % self._fd
        return None

    def _send(self, text):
        data = (text + "\n").encode()
        while data:
            data = data[self._write(self._fd, data):]

    def _receive(self):
        """One message: spun for (non-blocking reads) for SPIN_S, then waited for."""
        self._set_blocking(self._fd, False)
        try:
            deadline = None
            while True:
                try:
                    return self._read(self._fd, 64)
                except BlockingIOError:
                    now = self._clock()
                    if deadline is None:
                        deadline = now + SPIN_S
                    elif now > deadline:
                        self._poller.poll()
        finally:
            self._set_blocking(self._fd, True)

    def _go(self):
        line = b""
        while not line.endswith(b"\n"):
            chunk = self._receive()
            if not chunk:
                raise ParentClockError("the parent's clock closed the connection")
            line += chunk
            if len(line) > 64:
                raise ParentClockError("the parent's clock sent a malformed release")
        words = line.decode().split()
        if len(words) != 2 or words[0] != "go":
            raise ParentClockError("the parent's clock sent %r" % line[:40])
        return int(words[1], 16)

    def ready(self, kind, n=None):
        """Asks for a release and waits for it; returns the secret (an int of 64 bits), or a fresh
        random one when there is no parent (so callers mix the same way either way)."""
        if self._fd is None:
            return int.from_bytes(os.urandom(8), "little")
        self._send("ready %s" % kind if n is None else "ready %s %d" % (kind, n))
        return self._go()

    def done(self, copies=0, copy_s=0.0, marked=None):
        """Ends the sample: `copies` outputs were copied as soon as their calls returned, in
        `copy_s` seconds of the window (the parent takes that out, within a cap), `marked` of them
        with the parent's marks around them (marks()): the parent must have seen as many."""
        if self._fd is not None:
            words = "done %d %d" % (max(0, int(copies)), max(0, int(round(copy_s * 1e6))))
            self._send(words if marked is None else "%s %d" % (words, max(0, int(marked))))

    def marks(self):
        """(pause, resume): calls that write the parent's marks around a spot copy's pipeline of C
        calls (os.write bound to the socket: no bytecode between the marks and the copy), whose
        stamps say what the copy took; None when there is no parent."""
        if self._fd is None:
            return None
        return (functools.partial(self._write, self._fd, b"pause\n"),
                functools.partial(self._write, self._fd, b"resume\n"))

    def aimed(self, pause, resume):
        """Whether marks() still write what they wrote, on this socket: a partial's target can be
        changed in place (__setstate__) with no audit event. Exact types only."""
        return all(type(m) is functools.partial and m.func is self._write and not m.keywords
                   and type(m.args) is tuple and len(m.args) == 2 and type(m.args[0]) is int
                   and m.args[0] == self._fd and type(m.args[1]) is bytes and m.args[1] == word
                   for m, word in ((pause, b"pause\n"), (resume, b"resume\n")))

    def note(self, key, value):
        if self._fd is not None:
            self._send("note %s %.9g" % (key, value))

    def importing(self):
        """Said right before the candidate is imported: from here on only timed samples."""
        if self._fd is not None:
            self._send("import")

    def end(self):
        if self._fd is not None:
            try:
                self._send("end")
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
