"""lobench.bce on NumPy arrays: every CPU variant against the float64 oracle, and input checking."""
import threading

import numpy as np
import pytest

import lobench
from conftest import CASE_IDS, CASES, GRAD_TOL, LOSS_TOL, make_case, reference, rel


def check_against_reference(r, ref, what=""):
    assert abs(r.loss - ref["loss"]) <= LOSS_TOL * max(abs(ref["loss"]), 1e-300) or r.loss == ref["loss"], what
    assert rel(r.per_position_loss, ref["per_position_loss"]) <= LOSS_TOL, what
    assert rel(r.dA, ref["dA"]) <= GRAD_TOL, what
    assert rel(r.dE, ref["dE"]) <= GRAD_TOL, what
    ok = ~ref["near_zero"]  # a logit within 1e-5 of 0 may round to either side
    np.testing.assert_array_equal(r.counts[ok], ref["counts"][ok], err_msg=what)
    assert (r.counts.sum(axis=1) == r.dE.shape[0]).all()


def test_variants_listed():
    names = lobench.variants()
    assert {"reference", "dense", "chunked", "fused"} <= set(names)
    assert all(isinstance(d["description"], str) and d["description"] for d in lobench.variant_info())


@pytest.mark.parametrize("variant", lobench.variants())
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_variant_matches_float64_reference(variant, case):
    c = make_case(*case)
    r = lobench.bce(**c, variant=variant, threads=2)
    assert r.variant == f"cpu/{variant}"
    assert r.dA.dtype == np.float32 and r.dE.dtype == np.float32 and r.counts.dtype == np.int64
    assert r.dA.shape == c["A"].shape and r.dE.shape == c["E"].shape and r.counts.shape == (c["A"].shape[0], 4)
    check_against_reference(r, reference(**c), f"{variant} {case}")


def test_repeated_calls_are_bit_identical():
    # The variants' contract (variants/tests/conformance_test.cpp): the same inputs and thread count give
    # the same bits. Their tiling follows the thread count, so 1 and 2 threads agree to rounding only.
    c = make_case(*CASES[3])
    for threads in (1, 2):
        one, two = lobench.bce(**c, threads=threads), lobench.bce(**c, threads=threads)
        assert one.loss == two.loss
        np.testing.assert_array_equal(one.dA, two.dA)
        np.testing.assert_array_equal(one.dE, two.dE)
        np.testing.assert_array_equal(one.counts, two.counts)


def test_outputs_are_the_steps_buffers_and_survive_the_result():
    c = make_case(*CASES[1])
    dE = lobench.bce(**c).dE  # the result object is dropped; the array keeps its buffer alive
    assert dE.base is not None and not dE.flags.owndata
    np.testing.assert_allclose(dE, lobench.bce(**c).dE, rtol=0, atol=0)


def test_convert_accepts_float64_and_int64_and_keeps_wide_ids_padding():
    c = make_case(*CASES[1])
    ref = lobench.bce(**c)
    T64 = c["targets"].astype(np.int64)
    T64[T64 == -1] = 2**32  # would wrap to id 0 if narrowed blindly
    T64[T64 == c["E"].shape[0]] = -(2**40)
    r = lobench.bce(c["A"].astype(np.float64), c["E"].astype(np.float64), T64, c["weights"].astype(np.float64),
                    reduction=c["reduction"], convert=True)
    assert r.loss == ref.loss
    np.testing.assert_array_equal(r.dE, ref.dE)
    # A non-contiguous view is copied with convert=True and refused without it.
    At = np.asfortranarray(c["A"])
    assert lobench.bce(At, c["E"], c["targets"], c["weights"], convert=True).loss == lobench.bce(
        c["A"], c["E"], c["targets"], c["weights"]).loss


def test_e_format_reads_the_rounded_e():
    c = make_case(*CASES[3])
    for fmt in ["bfloat16", "float8_e4m3fn", "e5m7"]:
        r = lobench.bce(**c, e_format=fmt)
        Eq = lobench.quantize(c["E"], fmt).values  # what the variant decodes
        assert r.e_stored_bytes > 0
        check_against_reference(r, reference(c["A"], Eq, c["targets"], c["weights"], c["reduction"]), fmt)
    with pytest.raises(ValueError, match="variant 'dense' cannot run"):
        lobench.bce(**c, variant="dense", e_format="bfloat16")
    with pytest.raises(ValueError, match="e_format"):
        lobench.bce(**c, e_format="float7_nope")


def test_gil_released_during_the_step():
    c = make_case(70, 20000, 64, 4, False, "mean", 9)
    ticks, done = [0], threading.Event()

    def step():
        lobench.bce(**c, threads=1)
        done.set()

    t = threading.Thread(target=step)
    t.start()
    while not done.is_set():
        ticks[0] += 1  # Python code runs while the step holds no GIL
    t.join()
    assert ticks[0] > 1000


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(A=np.zeros((4, 3), np.float64)), TypeError, r"argument 'A' must be float32, got float64 \(pass convert=True"),
    (dict(A=np.zeros((4,), np.float32)), ValueError, r"argument 'A' must have rank 2 \[P, D\], got shape \(4,\)"),
    (dict(A=[[0.0] * 3] * 4), TypeError, r"argument 'A' must be a numpy.ndarray"),
    (dict(A=np.zeros((3, 4), np.float32).T), ValueError, r"argument 'A' must be C-contiguous"),
    (dict(E=np.zeros((5, 2), np.float32)), ValueError, r"argument 'E' has shape \(5, 2\); expected \[V, 3\]"),
    (dict(E=np.zeros((5, 3), np.int32)), TypeError, r"argument 'E' must be float32, got int32"),
    (dict(targets=np.zeros((4, 2), np.int64)), TypeError, r"argument 'targets' must be int32, got int64"),
    (dict(targets=np.zeros((4, 2), np.float32)), TypeError, r"argument 'targets' must be int32, got float32$"),
    (dict(targets=np.zeros((3, 2), np.int32)), ValueError, r"argument 'targets' has shape \(3, 2\); expected \[4, L\]"),
    (dict(targets=np.zeros((4, 0), np.int32)), ValueError, r"argument 'targets' has no columns"),
    (dict(weights=np.ones(3, np.float32)), ValueError, r"argument 'weights' has shape \(3,\); expected \[4\]"),
    (dict(weights=-np.ones(4, np.float32)), ValueError, r"argument 'weights' holds -1.0+ at \[0\]"),
    (dict(weights=np.full(4, np.nan, np.float32)), ValueError, r"argument 'weights' holds nan"),
    (dict(reduction="avg"), ValueError, r"argument 'reduction' must be 'mean' or 'sum'"),
    (dict(variant="fastest"), ValueError, r"argument 'variant': unknown CPU variant 'fastest'; expected one of"),
    (dict(threads=0), ValueError, r"argument 'threads'"),
    (dict(A=np.zeros((0, 3), np.float32), targets=np.zeros((0, 2), np.int32)), ValueError, r"argument 'A' is empty"),
])
def test_bad_inputs_raise_naming_the_argument(kwargs, exc, pattern):
    args = dict(A=np.zeros((4, 3), np.float32), E=np.zeros((5, 3), np.float32), targets=np.zeros((4, 2), np.int32))
    args.update(kwargs)
    with pytest.raises(exc, match=pattern):
        lobench.bce(**args)


@pytest.mark.parametrize("name", ["A", "E"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_raise_with_the_index(name, bad):
    args = dict(A=np.zeros((4, 3), np.float32), E=np.zeros((5, 3), np.float32), targets=np.zeros((4, 2), np.int32))
    args[name][2, 1] = bad
    with pytest.raises(ValueError, match=rf"argument '{name}' holds a non-finite value \(.*\) at \[2, 1\]"):
        lobench.bce(**args)
