"""The peers' measurement rules (peer_measure.py): adaptive repetitions as lobench's default, the CV,
the flags, the RSS meter, the CPU binding and the thread meter."""
import hashlib
import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import peer_measure
from peer_measure import Repetitions, cv, flags_of, time_steps


def run_with(samples_stream, repetitions):
    """time_steps on a fake clock: each step 'takes' the next value of the stream."""
    stream = iter(samples_stream)
    now = [0.0]
    pending = []

    def clock():
        return now[0]

    def step():
        now[0] += next(stream)
        pending.append(1)
        return len(pending)

    return time_steps(step, 0, repetitions, clock=clock)


def test_adaptive_stops_after_three_steady_samples_once_min_time_is_reached():
    samples, _ = run_with([0.5] * 50, Repetitions())
    assert len(samples) == 3  # total 1.5 s >= 1 s, CV 0


def test_adaptive_continues_until_min_time():
    samples, _ = run_with([0.125] * 50, Repetitions(min_time=1.0))  # exact in binary
    assert len(samples) == 8 and sum(samples) == 1.0


def test_adaptive_continues_while_noisy_and_stops_at_max_reps():
    noisy = [1.0, 2.0] * 50
    samples, _ = run_with(noisy, Repetitions(max_reps=7, max_time=1000))
    assert len(samples) == 7


def test_adaptive_stops_at_max_time_but_not_before_three():
    samples, _ = run_with([20.0, 10.0, 30.0, 5.0] * 5, Repetitions(max_time=30))
    assert len(samples) == 3  # 60 s >= 30 s, but never fewer than 3
    samples, _ = run_with([1.0, 3.0] * 20, Repetitions(max_time=10, max_reps=20))
    assert len(samples) == 6 and sum(samples) >= 10 and sum(samples[:-1]) < 10  # 1+3+1+3+1 = 9, then 12


def test_fixed_reps_override_everything():
    samples, result = run_with([1.0, 5.0] * 10, Repetitions(reps=1))
    assert len(samples) == 1 and result == 1
    samples, _ = run_with([0.01] * 10, Repetitions(reps=4))
    assert len(samples) == 4


def test_warmup_is_untimed():
    calls = []
    samples, _ = time_steps(lambda: calls.append(1), 2, Repetitions(reps=3))
    assert len(calls) == 5 and len(samples) == 3


def test_bad_repetition_options_are_refused():
    with pytest.raises(ValueError, match="--reps 0"):
        Repetitions(reps=0)
    with pytest.raises(ValueError, match="--max-reps 2"):
        Repetitions(max_reps=2)


def test_cv_is_the_sample_standard_deviation_over_the_mean():
    x = [1.0, 2.0, 4.0]
    assert math.isclose(cv(x), np.std(x, ddof=1) / np.mean(x))
    assert math.isnan(cv([1.0]))


def test_flags():
    assert flags_of(0.01, 0.5) == ""
    assert flags_of(0.06, 0.5) == "noisy"
    assert flags_of(0.01, 1.2) == "above_yardstick"
    assert flags_of(0.2, 1.01, busy=True) == "busy,noisy,above_yardstick"
    assert flags_of(math.nan, math.nan) == ""


def test_rss_meter_sees_a_touched_allocation_and_not_an_idle_block():
    with peer_measure.RssMeter() as idle:
        pass
    with peer_measure.RssMeter() as busy:
        x = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
        del x
    if not busy.reset:
        pytest.skip(busy.note)
    assert busy.growth >= 60 * 2**20, busy.growth
    assert idle.growth < 8 * 2**20, idle.growth


def test_bind_cores_sets_the_affinity_and_the_thread_variables():
    code = ("import os, peer_measure; c = peer_measure.bind_cores(1); "
            "print(sorted(os.sched_getaffinity(0)) == c, len(c), os.environ['OMP_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.join(os.path.dirname(__file__), "..")).stdout.split()
    assert out == ["True", "1", "1", "1"]
    with pytest.raises(ValueError, match="--threads"):
        peer_measure.bind_cores(len(os.sched_getaffinity(0)) + 1)


def test_thread_meter_counts_the_threads_that_worked():
    """Two hashing threads (hashlib releases the GIL on large buffers), alive until the meter has read them
    (a thread that has ended is gone from /proc/self/task, as a framework's pool threads never are)."""
    import time
    data = os.urandom(1 << 20)
    stop = threading.Event()

    def hash_until_stopped():
        while not stop.is_set():
            hashlib.sha256(data).digest()

    workers = [threading.Thread(target=hash_until_stopped) for _ in range(2)]
    try:
        with peer_measure.ThreadMeter() as meter:
            for w in workers:
                w.start()
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline:  # until each worker has some ticks (a loaded machine is slow)
                ticks = peer_measure._thread_ticks()
                if sorted(ticks[t] - meter.before.get(t, 0) for t in ticks)[-2] >= 20:
                    break
                time.sleep(0.05)
    finally:
        stop.set()
        for w in workers:
            w.join()
    assert meter.busy >= 2, (meter.busy, meter.total_ticks)


def test_a_self_timed_step_reports_its_own_seconds():
    samples, result = time_steps(lambda: ("loss", 0.25), 1, Repetitions(), self_timed=True)
    assert samples == [0.25] * 4 and result == "loss"  # 4 × 0.25 s reaches the 1 s minimum


def test_rss_meter_with_trim_still_sees_the_step():
    assert peer_measure.release_free_heap()  # glibc here
    with peer_measure.RssMeter(trim=True) as meter:
        x = np.ones(32 * 2**20 // 8)
        del x
    if meter.reset:
        assert meter.growth >= 28 * 2**20 and meter.note == "", (meter.growth, meter.note)


def test_bind_from_argv_reads_the_threads_option_before_anything_loads():
    code = ("import os, sys, peer_measure; c = peer_measure.bind_from_argv(['run.h5', '--B', '1', '--threads', '1']); "
            "bad = peer_measure.bind_from_argv(['--threads=zero']); "
            "print(c == sorted(os.sched_getaffinity(0)), len(c), bad, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.join(os.path.dirname(__file__), "..")).stdout.split()
    assert out == ["True", "1", "None", "False"]
