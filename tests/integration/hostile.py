"""Hostile perf.data files: small files that say costly things (issue 40),
each made the way perf lays a file out (header, attrs and their ids,
data, the feature table after it), for test_hostile.py and for measuring
perfspill-flame against them by hand:

    python3 tests/integration/hostile.py DIR    # writes DIR/CLASS.data
    python3 tests/integration/hostile.py DIR no-rounds 50331648

Each class is a function returning the file's bytes.
"""
import ctypes
import ctypes.util
import os
import struct
import sys

MAGIC = 0x32454c4946524550          # "PERFILE2"
ATTR_SIZE = 128                     # PERF_ATTR_SIZE_VER7

# sample_type bits
IP, TID, TIME, CALLCHAIN, PERIOD, CGROUP = 1, 2, 4, 32, 256, 1 << 21
# record types
MMAP, COMM, FORK, SAMPLE, MMAP2, CGROUP_REC = 1, 3, 7, 9, 10, 19
FINISHED_ROUND, COMPRESSED = 68, 81
MISC_USER = 2
MISC_MMAP_BUILD_ID = 1 << 14
PROT_EXEC = 4
# features
FEAT_BUILD_ID, FEAT_SAMPLE_TIME, FEAT_COMPRESSED = 2, 21, 27


def attr(sample_type, id_all=True):
    """A perf_event_attr: cpu-clock, these sample fields."""
    flags = (1 << 18) if id_all else 0          # sample_id_all
    a = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, 0, 1000, sample_type, 0,
                    flags)
    return a + bytes(ATTR_SIZE - len(a))


def trailer(st, pid, time):
    """sample_id after a non-sample record: TID and TIME of st."""
    t = b""
    if st & TID:
        t += struct.pack("<II", pid, pid)
    if st & TIME:
        t += struct.pack("<Q", time)
    return t


def rec(type_, body, misc=0):
    return struct.pack("<IHH", type_, misc, 8 + len(body)) + body


def name(s):
    """A string NUL-ended and padded to 8, as the kernel writes it."""
    b = s.encode() + b"\0"
    return b + bytes(-len(b) % 8)


def mmap2(st, pid, start, length, path, time=0, build_id=None):
    if build_id is not None:
        ident = struct.pack("<B3x20s", len(build_id), build_id)
        misc = MISC_USER | MISC_MMAP_BUILD_ID
    else:
        ident = bytes(24)
        misc = MISC_USER
    body = struct.pack("<IIQQQ", pid, pid, start, length, 0) + ident + \
        struct.pack("<II", PROT_EXEC, 2) + name(path)
    return rec(MMAP2, body + trailer(st, pid, time), misc)


def comm(st, pid, s, time=0):
    return rec(COMM, struct.pack("<II", pid, pid) + name(s) +
               trailer(st, pid, time))


def fork(st, pid, ppid, time=0):
    return rec(FORK, struct.pack("<IIIIQ", pid, ppid, pid, ppid, time) +
               trailer(st, pid, time))


def cgroup(st, cid, path, time=0):
    return rec(CGROUP_REC, struct.pack("<Q", cid) + name(path) +
               trailer(st, 0, time))


def sample(st, pid, ip, time, chain=None, cgroup_id=None):
    body = b""
    if st & IP:
        body += struct.pack("<Q", ip)
    if st & TID:
        body += struct.pack("<II", pid, pid)
    if st & TIME:
        body += struct.pack("<Q", time)
    if st & PERIOD:
        body += struct.pack("<Q", 1)
    if st & CALLCHAIN:
        chain = chain or [ip]
        body += struct.pack("<Q%dQ" % len(chain), len(chain), *chain)
    if st & CGROUP:
        body += struct.pack("<Q", cgroup_id or 0)
    return rec(SAMPLE, body, MISC_USER)


def build_id_rec(bid, path):
    """A HEADER_BUILD_ID entry of the build-id feature."""
    b = path.encode() + b"\0"
    b += bytes(-len(b) % 64)
    body = struct.pack("<i20sB3x", -1, bid, len(bid)) + b
    return rec(67, body, 1 << 15)       # PERF_RECORD_MISC_BUILD_ID_SIZE


def perf_data(attrs, data, features=None, ids=None, pad=0):
    """The file: attrs [(attr bytes, [ids])] or attr bytes with ids
    sections given as ids [(offset, size)] (made up, for a file that
    lies about them; pad zero bytes after the header for them to point
    at); features {id: bytes}."""
    features = dict(features or {})
    features.setdefault(FEAT_SAMPLE_TIME, struct.pack("<QQ", 1, 1 << 40))
    head = 104 + pad
    nattr = len(attrs)
    attr_size = ATTR_SIZE + 16
    id_off = head
    id_blob = b""
    secs = []
    for i, a in enumerate(attrs):
        if ids is not None:
            secs.append(ids[i])
        else:
            blob = struct.pack("<%dQ" % len(a[1]), *a[1])
            secs.append((id_off + len(id_blob), len(blob)))
            id_blob += blob
    attrs_off = head + len(id_blob)
    attr_blob = b"".join((a if ids is not None else a[0]) +
                         struct.pack("<QQ", *s) for a, s in zip(attrs, secs))
    data_off = attrs_off + len(attr_blob)
    table_off = data_off + len(data)
    fids = sorted(features)
    pay_off = table_off + 16 * len(fids)
    table = b""
    pays = b""
    for f in fids:
        table += struct.pack("<QQ", pay_off + len(pays), len(features[f]))
        pays += features[f]
    bits = [0, 0, 0, 0]
    for f in fids:
        bits[f // 64] |= 1 << (f % 64)
    hdr = struct.pack("<QQQQQQQQQ4Q", MAGIC, 104, attr_size, attrs_off,
                      len(attr_blob), data_off, len(data), 0, 0, *bits)
    return hdr + bytes(pad) + id_blob + attr_blob + data + table + pays


def zstd_frame(raw, level=19):
    """raw as one zstd frame, through the libzstd the daemon links."""
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_compress.restype = ctypes.c_size_t
    lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.c_int]
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    cap = lib.ZSTD_compressBound(len(raw))
    buf = ctypes.create_string_buffer(cap)
    n = lib.ZSTD_compress(buf, cap, raw, len(raw), level)
    assert not lib.ZSTD_isError(n)
    return buf.raw[:n]


TINY = rec(SAMPLE, b"")                 # an 8-byte sample (sample_type 0)


def compressed(raw_len, records, mmap_len):
    """records COMPRESSED records, each decoding to raw_len bytes of
    8-byte samples; the feature's mmap_len as given."""
    frame = zstd_frame(TINY * (raw_len // 8))
    data = rec(COMPRESSED, frame) * records
    feat = struct.pack("<IIIII", 1, 1, 19, 0, mmap_len)
    return perf_data([(attr(0, id_all=False), [])], data,
                     {FEAT_COMPRESSED: feat})


def compressed_big():
    """64 MiB of 8-byte samples per record (issue 40: 23 KB -> 4.4 GB)."""
    return compressed(64 << 20, 10, 128 << 20)


def compressed_small():
    """Records at the floor (64 KiB each, from a few bytes)."""
    return compressed(64 << 10, 700, 1 << 20)


def no_rounds(size=64 << 20):
    """size bytes of 8-byte samples and no FINISHED_ROUND (issue 40:
    100 MB -> 1.6 GB)."""
    return perf_data([(attr(0, id_all=False), [])], TINY * (size // 8))


def attr_ids(n=2000, pad=300 << 10):
    """n attrs whose id sections each span the file (issue 40: 304 KB ->
    2.4 GB, 69 s)."""
    st = IP | TID | TIME | PERIOD | (1 << 6)    # ID
    data = rec(FINISHED_ROUND, b"")
    size = len(perf_data([attr(st)] * n, data, ids=[(0, 0)] * n, pad=pad))
    return perf_data([attr(st)] * n, data, ids=[(104, size - 104)] * n,
                     pad=pad)


ST = IP | TID | TIME | PERIOD


def fork_maps(nmaps=10000, children=40000):
    """A process of nmaps mappings, then children that each fork from it
    and map once more (issue 40: 4.8 MB -> 3.2 GB). Samples: the parent
    in its first map, the last child in its parent's first map and in
    its own, the parent at the child's own map's address (none of its)."""
    out = [comm(ST, 100, "parent", 1)]
    for i in range(nmaps):
        out.append(mmap2(ST, 100, 0x10000000 + i * 0x2000, 0x1000,
                         "/parent/lib%d.so" % i, 2))
    for c in range(children):
        pid = 1000 + c
        out.append(fork(ST, pid, 100, 3))
        out.append(mmap2(ST, pid, 0x7f0000000000, 0x1000,
                         "/child/own%d.so" % c, 3))
    last = 1000 + children - 1
    out.append(sample(ST, 100, 0x10000010, 4))
    out.append(sample(ST, last, 0x10000010, 5))
    out.append(sample(ST, last, 0x7f0000000010, 6))
    out.append(sample(ST, 100, 0x7f0000000010, 7))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(ST), [])], b"".join(out))


def build_ids(n=60000):
    """n build-ids in the file's table and a mapping of each (issue 40:
    a linear search per mapping, 21.8 s)."""
    table = b"".join(build_id_rec(struct.pack("<I16x", i),
                                  "/bin/file%d" % i) for i in range(n))
    out = [comm(ST, 100, "many", 1)]
    for i in range(n):
        out.append(mmap(ST, 100, 0x10000000 + i * 0x2000, 0x1000,
                        "/bin/file%d" % i, 2))
    out.append(sample(ST, 100, 0x10000010, 3))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(ST), [])], b"".join(out),
                     {FEAT_BUILD_ID: table})


def mmap(st, pid, start, length, path, time=0):
    body = struct.pack("<IIQQQ", pid, pid, start, length, 0) + name(path)
    return rec(MMAP, body + trailer(st, pid, time), MISC_USER)


def cgroups(n=100000):
    """n cgroups, then a sample in each (issue 40: linear searches,
    2.75 s)."""
    st = ST | CGROUP
    out = [comm(st, 100, "cg", 1)]
    for i in range(n):
        out.append(cgroup(st, 1000 + i, "/cg/%d" % i, 2))
    for i in range(n):
        out.append(sample(st, 100, 0x1000, 3 + i, cgroup_id=1000 + i))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(st), [])], b"".join(out))


def huge_times():
    """Samples at times near 2^63 and 2^64 (UBSan: signed overflows of
    the wall clock)."""
    out = [comm(ST, 100, "late", 1)]
    for t in ((1 << 63) - 5, (1 << 63) + 5, (1 << 64) - 1):
        out.append(sample(ST, 100, 0x1000, t))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(ST), [])], b"".join(out),
                     {FEAT_SAMPLE_TIME: struct.pack("<QQ", (1 << 63) - 5,
                                                    (1 << 64) - 1)})


def no_mappings():
    """Samples and no mapping at all (UBSan: memcpy from NULL)."""
    out = [comm(ST, 100, "nomap", 1)]
    for t in range(3):
        out.append(sample(ST, 100, 0x1000 + t, 10 + t))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(ST), [])], b"".join(out))


def special_files(fifo, fifo_bid, dev):
    """Mappings that name a FIFO (with and without a build-id) and a
    device: samples in each, so that the reader looks for their code."""
    out = [comm(ST, 100, "special", 1),
           mmap2(ST, 100, 0x400000, 0x1000, fifo, 2),
           mmap2(ST, 100, 0x500000, 0x1000, fifo_bid, 2,
                 build_id=b"\x5a" * 20),
           mmap2(ST, 100, 0x600000, 0x1000, dev, 2)]
    for i, a in enumerate((0x400010, 0x500010, 0x600010)):
        out.append(sample(ST, 100, a, 10 + i))
    out.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(ST), [])], b"".join(out))


def repeated(rounds=80, stacks=2000, depth=20):
    """Not hostile: a process of 16 mappings with stacks distinct stacks
    of depth frames, one sample of each in a round, the same round
    rounds times (its times again: each round is read at the next).
    Twice the rounds is twice the file and samples and the same stacks:
    what reading it costs beyond must not grow with them."""
    st = ST | CALLCHAIN
    head = [comm(st, 100, "repeat", 1)]
    for m in range(16):
        head.append(mmap2(st, 100, 0x10000000 + m * 0x100000, 0x100000,
                          "/repeat/lib%d.so" % m, 2))
    one = []
    for i in range(stacks):
        chain = [0x10000000 + ((i * 7 + f * 13) % 16) * 0x100000 +
                 (i * 31 + f * 17) % 0x1000 * 16 for f in range(depth)]
        one.append(sample(st, 100, chain[0], 10 + i, chain))
    one.append(rec(FINISHED_ROUND, b""))
    return perf_data([(attr(st), [])],
                     b"".join(head) + b"".join(one) * rounds)


CLASSES = {
    "compressed-big": compressed_big,
    "compressed-small": compressed_small,
    "no-rounds": no_rounds,
    "attr-ids": attr_ids,
    "fork-maps": fork_maps,
    "build-ids": build_ids,
    "cgroups": cgroups,
    "huge-times": huge_times,
    "no-mappings": no_mappings,
    "repeated": repeated,
}

if __name__ == "__main__":
    # hostile.py DIR: every class; hostile.py DIR CLASS [N...]: that one,
    # with its function's numbers
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for k, fn in CLASSES.items():
        if len(sys.argv) > 2 and k != sys.argv[2]:
            continue
        with open(os.path.join(out, k + ".data"), "wb") as f:
            f.write(fn(*(int(a) for a in sys.argv[3:])))
        print(k, os.path.getsize(os.path.join(out, k + ".data")))
