#!/usr/bin/env python3
"""ml_dtypes as the oracle for precision_sim's tests: writes binary answers to stdout.

  ml_dtypes_oracle.py decode FORMAT   u64 n, then n uint32: float32 bits of every code 0 .. 2^bits-1
  ml_dtypes_oracle.py sample FORMAT [fast]   u64 n, u32 code_bytes, n uint32 inputs, n codes (uint8/uint16)
  ml_dtypes_oracle.py subnormals FORMAT [fast]  as `sample`, for the 2^24 inputs 0x00000000..0x007FFFFF and
                                      0x80000000..0x807FFFFF: both zeros and every float32 subnormal
  ml_dtypes_oracle.py stream FORMAT [FIRST COUNT]  codes of all 2^32 float32 inputs in bit-pattern order, in
                                      chunks of 2^24 (or of the COUNT inputs from bit pattern FIRST, both
                                      multiples of 2^24)
  ml_dtypes_oracle.py float_types     the names of every real floating-point type ml_dtypes exports,
                                      one per line (complex types, pairs of these, are left out)

`sample` is a deterministic stratified set of >= 2^24 float32 inputs: 2^15 random mantissas for each
sign and each of the 256 float32 exponents, plus every value of the format, every midpoint between
neighbours (ties), their float32 neighbours, the overflow boundary above the largest value, +-0,
+-inf and several NaNs. Inputs are float32 because ml_dtypes rounds wider inputs through float32.
FORMAT is an ml_dtypes type name, or float16 (NumPy's). Exit status 2 if numpy/ml_dtypes is missing.
`fast` (the tests' fast tier, what CI runs; issue 43): 2^11 random mantissas per binade instead of 2^15 (the
grid-derived inputs all kept), and of the subnormals the 4096 smallest and largest of each sign and every
17th between: about 2^20 inputs each instead of 2^24.
"""
import struct
import sys
import warnings

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # the C++ test turns this into a failure with this message
    sys.stderr.write(f"ml_dtypes_oracle.py: cannot import numpy/ml_dtypes ({e}); "
                     "install them (pip install numpy ml_dtypes)\n")
    sys.exit(2)

SEED = 20240611
PER_BINADE = 1 << 15
FAST_PER_BINADE = 1 << 11


def dtype_of(name):
    if name == "float16":
        return np.dtype(np.float16)
    if not hasattr(ml_dtypes, name):
        sys.stderr.write(f"ml_dtypes_oracle.py: unknown format {name}\n")
        sys.exit(3)
    return np.dtype(getattr(ml_dtypes, name))


def bits_of(dt):
    return 16 if dt == np.float16 else ml_dtypes.finfo(dt).bits


def code_view(dt):
    return np.uint16 if bits_of(dt) > 8 else np.uint8


def to_codes(x, dt):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.astype(dt).view(code_view(dt))


def decode_all(dt):
    codes = np.arange(1 << bits_of(dt), dtype=np.uint32).astype(code_view(dt))
    with np.errstate(all="ignore"):
        return codes.view(dt).astype(np.float32)


def sample_inputs(dt, per_binade=PER_BINADE):
    rng = np.random.default_rng(SEED)
    parts = []
    # Every sign and float32 exponent, random mantissas.
    for sign in (0, 1):
        for exp in range(256):
            mant = rng.integers(0, 1 << 23, size=per_binade, dtype=np.uint32)
            parts.append((np.uint32(sign << 31) | np.uint32(exp << 23) | mant).astype(np.uint32))
    # Grid-derived: values, midpoints (ties), and their float32 neighbours.
    vals = decode_all(dt)
    fin = np.unique(np.abs(vals[np.isfinite(vals)]).astype(np.float64))
    mids = (fin[:-1] + fin[1:]) / 2
    top = fin[-1]
    step = top - fin[-2] if len(fin) > 1 else top
    over = np.array([top + step / 2, top + step, top + 1.5 * step, top * 2, top * 4], dtype=np.float64)
    with np.errstate(all="ignore"):
        pts = np.concatenate([fin, mids, over]).astype(np.float32)
    pts = pts[np.isfinite(pts)]
    near = [pts, np.nextafter(pts, np.float32(np.inf)), np.nextafter(pts, np.float32(0)),
            np.nextafter(np.nextafter(pts, np.float32(np.inf)), np.float32(np.inf))]
    grid = np.concatenate(near).astype(np.float32).view(np.uint32)
    parts.append(grid)
    parts.append(grid | np.uint32(0x80000000))
    # Specials and the smallest float32 values.
    specials = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
                0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FA00000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000,
                0x80800000, 0x007FFFFF, 0x807FFFFF]
    parts.append(np.array(specials, dtype=np.uint32))
    parts.append(np.arange(1, 4097, dtype=np.uint32))
    parts.append(np.arange(1, 4097, dtype=np.uint32) | np.uint32(0x80000000))
    return np.concatenate(parts).astype(np.uint32)


def subnormal_inputs(fast=False):
    positive = np.arange(0, 1 << 23, dtype=np.uint32)
    if fast:
        ends = (positive < 4096) | (positive >= (1 << 23) - 4096)
        positive = positive[ends | (positive % 17 == 0)]
    return np.concatenate([positive, positive | np.uint32(0x80000000)])


def float_type_names():
    """Every attribute of ml_dtypes that is a NumPy scalar type with finfo, complex types excepted."""
    names = []
    for name in sorted(dir(ml_dtypes)):
        obj = getattr(ml_dtypes, name)
        if not isinstance(obj, type):
            continue
        try:
            dt = np.dtype(obj)
            ml_dtypes.finfo(dt)
        except (TypeError, ValueError):
            continue
        if dt.kind == "c" or "complex" in name:
            continue
        names.append(name)
    return names


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "float_types":
        sys.stdout.write("".join(n + "\n" for n in float_type_names()))
        return
    fast = len(sys.argv) == 4 and sys.argv[1] in ("sample", "subnormals") and sys.argv[3] == "fast"
    chunk = 1 << 24
    ranged = len(sys.argv) == 5 and sys.argv[1] == "stream"
    if ranged:
        first, count = int(sys.argv[3]), int(sys.argv[4])
        if first % chunk or count % chunk or first < 0 or count < 0 or first + count > 1 << 32:
            sys.stderr.write(f"stream: FIRST {first} and COUNT {count} must be multiples of 2^24 within 2^32\n")
            sys.exit(1)
        del sys.argv[3:]
    else:
        first, count = 0, 1 << 32
    if len(sys.argv) != 3 + fast or sys.argv[1] not in ("decode", "sample", "subnormals", "stream"):
        sys.stderr.write(__doc__)
        sys.exit(1)
    mode, name = sys.argv[1], sys.argv[2]
    dt = dtype_of(name)
    out = sys.stdout.buffer
    if mode == "decode":
        v = decode_all(dt).view(np.uint32)
        out.write(struct.pack("<Q", v.size))
        out.write(v.tobytes())
    elif mode in ("sample", "subnormals"):
        x = sample_inputs(dt, FAST_PER_BINADE if fast else PER_BINADE) if mode == "sample" else subnormal_inputs(fast)
        codes = to_codes(x.view(np.float32), dt)
        out.write(struct.pack("<QI", x.size, codes.itemsize))
        out.write(x.tobytes())
        out.write(codes.tobytes())
    else:
        for start in range(first, first + count, chunk):
            x = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
            out.write(to_codes(x, dt).tobytes())
    out.flush()


if __name__ == "__main__":
    main()
