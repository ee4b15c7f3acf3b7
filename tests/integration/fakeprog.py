# SPDX-License-Identifier: BSD-3-Clause
"""A fake program in Python: eventlogs written here, byte by byte, as GHC's
RTS writes them (a header, blocks of events, the end marker) or as no RTS
ever would (labels that are not UTF-8, a block marker that claims 4 GiB,
thousands of IPE events), served on a Unix socket by a process of its own
(so that it has a pid of its own and streams at full speed):

    python3 fakeprog.py PATH HEAD [--tail FILE] [--tail-bytes N] [--close]

Each connection gets HEAD's bytes, then TAIL's again and again until
N bytes of it went (forever without --tail-bytes), then stays open until
the process is killed, or is closed with --close. Prints "listening" once
the socket listens."""

import os
import socket
import struct
import sys
import threading

BLOCK, USER_MSG, RTS_ID, ARGS, PID = 18, 19, 29, 30, 32
GC_START, GC_END, GC_STATS, MARKER = 9, 10, 53, 58
PROF_BEGIN, SAMPLE_BEGIN, SAMPLE_STRING, SAMPLE_END, IPE = 160, 162, 164, 165, 169
END = b"\xff\xff"

# The types a fake program declares, with GHC 9.6's sizes (-1: variable).
SIZES = {GC_START: 0, GC_END: 0, BLOCK: 14, USER_MSG: -1, RTS_ID: -1, ARGS: -1, PID: 8,
         GC_STATS: 50, MARKER: -1, PROF_BEGIN: -1, SAMPLE_BEGIN: 8, SAMPLE_STRING: -1,
         SAMPLE_END: 8, IPE: -1}


def header(sizes=None):
    out = b"hdrb" + b"hetb"
    for k, size in (sizes or SIZES).items():
        desc = b"type %d" % k
        out += (b"etb\0" + struct.pack(">Hh", k, size) + struct.pack(">I", len(desc)) + desc
                + struct.pack(">I", 0) + b"ete\0")
    return out + b"hete" + b"hdre" + b"datb"


def event(kind, ms, payload=b""):
    head = struct.pack(">HQ", kind, int(ms * 1000000))
    if SIZES[kind] < 0:
        head += struct.pack(">H", len(payload))
    return head + payload


def block(events, cap=None, size=None):
    """events: [(kind, ms, payload)]; `size`: what the marker claims (its
    real size when None)."""
    body = b"".join(event(*e) for e in events)
    t0, t1 = int(events[0][1] * 1000000), int(events[-1][1] * 1000000)
    return struct.pack(">HQIQH", BLOCK, t0, size if size is not None else 24 + len(body), t1,
                       0xFFFF if cap is None else cap) + body


def program(argv, pid, ms=1, rts=b"GHC-9.6.6 rts_thr"):
    """Who the program is: its RTS, arguments (argv[0] names it) and pid."""
    return [(RTS_ID, ms, struct.pack(">I", 0) + rts),
            (ARGS, ms, struct.pack(">I", 0) + b"\0".join(argv)),
            (PID, ms, struct.pack(">II", 0, pid))]


def heap_profile(ms=1, breakdown=7):
    """HEAP_PROF_BEGIN: profile 0, 100 ms, closure types (-hT) by default."""
    return [(PROF_BEGIN, ms, struct.pack(">BQI", 0, 100000000, breakdown) + b"\0" * 7)]


def census(ms, lines):
    """One heap census: [(label bytes, bytes)]."""
    out = [(SAMPLE_BEGIN, ms, struct.pack(">Q", 0))]
    for label, n in lines:
        out.append((SAMPLE_STRING, ms, struct.pack(">BQ", 0, n) + label + b"\0"))
    return out + [(SAMPLE_END, ms, struct.pack(">Q", 0))]


def gc(ms, gen=0):
    """A collection: start, GC_STATS_GHC (1 KiB copied), end."""
    return [(GC_START, ms), (GC_STATS, ms, struct.pack(">IHQQQIQQ", 0, gen, 1024, 0, 0, 1, 0, 0)),
            (GC_END, ms)]


def ipe(addr, label, loc=b"Main.hs:1:1", ms=1):
    """An IPE event: the table's address, then table name, closure type,
    type, label, module and source location (the name people see is
    "LABEL (LOC)")."""
    strings = [b"t_info", b"THUNK", b"T", label, b"Main", loc]
    return (IPE, ms, struct.pack(">Q", addr) + b"".join(s + b"\0" for s in strings))


def eventlog(*blocks_, end=True):
    return header() + b"".join(blocks_) + (END if end else b"")


def start(s, path, head, tail=None, tail_bytes=None, close=False):
    """The fake program as a process of the test `s`, listening at `path`."""
    import subprocess
    files = []
    for name, data in (("head", head), ("tail", tail)):
        if data is not None:
            f = s.path("fake-%d-%s.bin" % (len(s.procs) + len(s.clients), name))
            with open(f, "wb") as out:
                out.write(data)
            files.append(f)
    args = [sys.executable, os.path.abspath(__file__), path, files[0]]
    if tail is not None:
        args += ["--tail", files[1]]
    if tail_bytes is not None:
        args += ["--tail-bytes", str(tail_bytes)]
    if close:
        args.append("--close")
    p = s.spawn(args, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "listening":
        raise RuntimeError("the fake program did not listen: %r" % line)
    return p


def serve_one(c, head, tail, tail_bytes, close):
    try:
        c.sendall(head)
        sent = 0
        while tail and (tail_bytes is None or sent < tail_bytes):
            part = tail if tail_bytes is None else tail[:tail_bytes - sent]
            c.sendall(part)
            sent += len(part)
        if close:
            c.close()
            return
        c.recv(1 << 16)  # until the client leaves
        while c.recv(1 << 16):
            pass
    except OSError:
        pass


def main(argv):
    path, head = argv[0], open(argv[1], "rb").read()
    tail = tail_bytes = None
    close = "--close" in argv
    if "--tail" in argv:
        tail = open(argv[argv.index("--tail") + 1], "rb").read()
    if "--tail-bytes" in argv:
        tail_bytes = int(argv[argv.index("--tail-bytes") + 1])
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    print("listening", flush=True)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve_one, args=(c, head, tail, tail_bytes, close),
                         daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])
