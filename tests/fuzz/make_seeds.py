#!/usr/bin/env python3
"""make_seeds.py OUTDIR - writes the libFuzzer seed corpora (OUTDIR/hlo, sharding, npy, cost) from the
examples' HLO modules, the sharding texts that appear in the tests and examples, and a few generated .npy
files. Deterministic: the same tree gives the same seeds."""
import glob, os, re, struct, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "fuzz", "seeds")


def put(kind, name, data):
    d = os.path.join(out, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


hlos = sorted(glob.glob(os.path.join(root, "examples", "*.hlo")) + glob.glob(os.path.join(root, "tests", "data", "*.hlo")))
for p in hlos:
    text = open(p).read()
    put("hlo", os.path.basename(p), text)
    put("cost", os.path.basename(p), "\x01" + "2x2\n" + text)

# sharding texts quoted in the sources (C strings and HLO attributes), and PartitionSpecs
texts = set()
for p in sorted(glob.glob(os.path.join(root, "tests", "*.c")) + hlos):
    for m in re.finditer(r'\{(?:devices=|replicated|maximal|manual|unknown|\{)[^"\n]*?\}+', open(p).read()):
        texts.add(m.group(0))
for i, t in enumerate(sorted(texts)[:400]):
    put("sharding", "s%03d" % i, b"\x00" + t.encode())
specs = ["x, y", "(x, y), _", "None, ?", "z", "(x,y,z)", "x, None, y", "?, ?", ""]
for i, s in enumerate(specs):
    rank = max(1, s.count(",") + 1) if s else 0
    put("sharding", "spec%d" % i, bytes([1 | (rank << 1)]) + s.encode())
# the book's notation (first byte 0x80): the ch.3 cases on the target's x=2,y=2,z=2 mesh
exprs = ["A[I_x, J] * B[J, K_y] -> C[I_x, K_y]", "A[I, J_x] * B[J_x, K] -> C[I, K]", "A[I, J_x] * B[J_x, K] -> C[I, K_x]",
         "A[I_x, J] * B[J_x, K] -> C[I_x, K]", "A[I_x, J] -> A[I, J_x]", "A[I, J_{xy}] * B[J_{xy}, K] -> C[I, K]{U_{xy}}",
         "A[I_{zyx}, J]"]
for i, e in enumerate(exprs):
    put("sharding", "notation%d" % i, b"\x80" + e.encode())


def npy(descr, shape, payload):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape).rstrip(" ") if len(shape) != 1 else "%d," % shape[0])
    pad = 64 - (10 + len(hdr) + 1) % 64
    hdr = hdr + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + payload


put("npy", "f4_2x3", npy("<f4", (2, 3), struct.pack("<6f", 1, -2, 3.5, 0, 1e9, -1e-9)))
put("npy", "i4_4", npy("<i4", (4,), struct.pack("<4i", 1, -2, 3, 7)))
put("npy", "u4_scalar", npy("<u4", (), struct.pack("<I", 42)))
put("npy", "b1_3", npy("|b1", (3,), b"\x01\x00\x01"))
put("npy", "u1_2x2", npy("|u1", (2, 2), b"\x00\x01\x02\x03"))
put("npy", "f4_empty", npy("<f4", (0, 5), b""))
