# SPDX-License-Identifier: BSD-3-Clause
"""A flood of TCP connections, shared by the security test and the attack
benchmark: connect to 127.0.0.1:PORT and close at once, every other
connection with a reset, for SECONDS or until SIGTERM; then print how many
connections were made.

It runs as another user (setpriv), who may not be able to read this
checkout, so callers pass its text: [python3, "-c", source(), PORT, SECS]."""

import signal
import socket
import struct
import sys
import time


def source():
    """This file's text, to run with python3 -c."""
    with open(__file__) as f:
        return f.read()


def main(argv):
    port = int(argv[1])
    end = time.monotonic() + float(argv[2]) if len(argv) > 2 else None
    n = 0
    rst = struct.pack("ii", 1, 0)

    def stop(*_):
        print(n, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    while end is None or time.monotonic() < end:
        c = socket.socket()
        c.settimeout(2)
        try:
            c.connect(("127.0.0.1", port))
            if n % 2:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, rst)
        except OSError:
            pass
        c.close()
        n += 1
    stop()


if __name__ == "__main__":
    main(sys.argv)
