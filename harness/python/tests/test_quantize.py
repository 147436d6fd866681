"""lobench.quantize against ml_dtypes' casts, and its input checks."""
import numpy as np
import pytest

import lobench

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed (scripts/install_deps.sh installs it)")

NAMES = ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e3m4", "float6_e2m3fn",
         "float4_e2m1fn"]


def dtype(name):
    return np.float16 if name == "float16" else getattr(ml_dtypes, name)


def inputs():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20000).astype(np.float32) * s for s in (1e-3, 1, 100, 1e4)])
    return np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 61440], np.float32)])


@pytest.mark.parametrize("name", NAMES)
def test_nearest_even_matches_ml_dtypes(name):
    x = inputs()
    q = lobench.quantize(x, name)
    want = x.astype(dtype(name))
    assert q.format == name and q.codes.shape == x.shape
    np.testing.assert_array_equal(q.values, want.astype(np.float32))  # NaN == NaN here
    np.testing.assert_array_equal(q.codes.view(dtype(name)).astype(np.float32), want.astype(np.float32))
    if name != "float16":
        assert q.as_ml_dtypes().dtype == dtype(name)


def test_shapes_stochastic_seeds_and_bits():
    x = np.linspace(-3, 3, 2 * 3 * 500, dtype=np.float32).reshape(2, 3, 500)
    a = lobench.quantize(x, "e4m3fn", rounding="stochastic", seed=1)
    b = lobench.quantize(x, "e4m3fn", rounding="stochastic", seed=1, threads=1)
    c = lobench.quantize(x, "e4m3fn", rounding="stochastic", seed=2)
    assert a.values.shape == x.shape and a.format == "float8_e4m3fn"
    np.testing.assert_array_equal(a.values, b.values)
    assert (a.values != c.values).any()
    down, up = lobench.quantize(x, "e4m3fn", rounding="down").values, lobench.quantize(x, "e4m3fn", rounding="up").values
    assert ((a.values == down) | (a.values == up)).all()
    assert lobench.quantize(x, "e4m3fn", rounding="stochastic", bits=3).values.shape == x.shape
    assert lobench.quantize(x, "float32").codes is None and lobench.quantize(x, "e8m20").codes is None
    assert lobench.quantize(x, "e5m7").codes.dtype == np.uint16


def test_formats_and_roundings_listed():
    assert {"bfloat16", "float8_e4m3fn", "float8_e5m2", "tf32", "float32"} <= set(lobench.formats())
    assert {"nearest_even", "stochastic", "toward_zero"} <= set(lobench.roundings())


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(x=np.zeros(3)), TypeError, r"argument 'x' must be a numpy.ndarray of float32, got float64"),
    (dict(x=[1.0]), TypeError, r"argument 'x' must be a numpy.ndarray of float32, got list"),
    (dict(format="float7"), ValueError, r"argument 'format'"),
    (dict(rounding="nearest_odd"), ValueError, r"argument 'rounding'"),
    (dict(rounding="stochastic", bits=40), ValueError, r"argument 'bits'"),
])
def test_bad_arguments(kwargs, exc, pattern):
    args = dict(x=np.zeros(3, np.float32), format="bfloat16")
    args.update(kwargs)
    with pytest.raises(exc, match=pattern):
        lobench.quantize(**args)
