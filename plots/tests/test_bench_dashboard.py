"""plots/bench_dashboard.py: a site from a history store with one injected regression; its pages carry
the gate's verdicts, and in headless Chromium they draw their charts, show the regression marker and log
no error."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import bench_dashboard
import perf_history
from gbench_fixture import write_gbench

PLOTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The site vendors plotly.min.js from the Python package plotly (scripts/install_deps.sh installs it).
pytest.importorskip("plotly", reason="the dashboard needs the Python package plotly")
BASE = {"gemm": 50.0, "fused": 160.0, "chunked": 210.0}
REGRESSED_RUN = 3  # fused 1.3x slower from this run on


def make_store(tmp_path):
    store, inbox = tmp_path / "history", tmp_path / "inbox"
    inbox.mkdir()
    for k in range(5):
        times = dict(BASE, fused=BASE["fused"] * (1.3 if k >= REGRESSED_RUN else 1.0))
        path = write_gbench(str(inbox / f"run{k}.json"), times, commit=f"c{k}aaaa", seed=k,
                            date=f"2026-12-0{k + 1}T10:00:00+00:00")
        perf_history.record(str(store), path)
    return store


def build_site(tmp_path, *extra):
    store = make_store(tmp_path)
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(site),
                        *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return store, site


def page_data(path):
    text = open(path).read()
    m = re.search(r'<script type="application/json" id="lobench-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_history_is_per_machine_and_append_only(tmp_path):
    store = make_store(tmp_path)
    (machine,) = os.listdir(store)
    assert machine.startswith("ci-") and len(os.listdir(store / machine)) == 5
    again = perf_history.record(str(store), str(tmp_path / "inbox" / "run0.json"))
    assert len(os.listdir(store / machine)) == 6 and again.endswith(".1.json")


def test_pages_carry_the_gates_verdicts(tmp_path):
    store, site = build_site(tmp_path, "--commit-url", "https://example.org/commit/{commit}")
    (machine,) = os.listdir(store)
    pages = sorted(os.listdir(site / machine))
    assert pages == sorted(bench_dashboard.page_name(f"{f}/V:16000/D:64/manual_time") for f in ("chunked", "fused", "gemm"))
    fused = page_data(site / machine / bench_dashboard.page_name("fused/V:16000/D:64/manual_time"))
    verdicts = [p["verdict"] for p in fused["points"]]
    assert verdicts == ["first", "same", "same", "slower", "same"]
    assert fused["points"][REGRESSED_RUN]["ratio"] == pytest.approx(1.3, rel=0.05)
    assert all(p["commit"] and p["date"] and p["machine"] and p["cv"] > 0 for p in fused["points"])
    chunked = page_data(site / machine / bench_dashboard.page_name("chunked/V:16000/D:64/manual_time"))
    assert "slower" not in [p["verdict"] for p in chunked["points"]]
    index = open(site / "index.html").read()
    # regressions first: the fused row (slower against the baseline) precedes the others
    assert index.index("fused/V:16000") < index.index("chunked/V:16000")
    assert "plotly.min.js" in os.listdir(site) and "dashboard.js" in os.listdir(site)
    assert '<a href="https://example.org/commit/c4aaaa">c4aaaa</a>' in index
    assert fused["commitUrl"] == "https://example.org/commit/{commit}"


def test_above_the_yardstick_is_flagged(tmp_path):
    store, site = build_site(tmp_path)
    index = open(site / "index.html").read()
    # fused: 6 PVD in 160 ms against gemm's 2 PVD in 50 ms is 0.94 of the rate: not flagged
    assert "above yardstick" not in index
    inbox = tmp_path / "inbox"
    fast = write_gbench(str(inbox / "fast.json"), dict(BASE, fused=120.0), commit="fast", seed=9,
                        date="2026-12-09T10:00:00+00:00")
    perf_history.record(str(store), fast)
    subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(site)], check=True,
                   capture_output=True)
    assert "above yardstick" in open(site / "index.html").read()


def test_refuses_the_store_as_site_and_an_empty_store(tmp_path):
    store = make_store(tmp_path)
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(store)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "different folders" in r.stderr
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(tmp_path / "empty"), "-o",
                        str(tmp_path / "s2")], capture_output=True, text=True)
    assert r.returncode == 2 and "no runs" in r.stderr


def test_a_baseline_commit_that_matches_no_run_is_an_error(tmp_path):
    """A typo in --baseline used to compare against the machine's first run, silently."""
    store = make_store(tmp_path)
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o",
                        str(tmp_path / "site"), "--baseline", "deadbeef"], capture_output=True, text=True)
    assert r.returncode == 2 and "--baseline 'deadbeef' matches no run" in r.stderr and "c0aaaa" in r.stderr
    assert not (tmp_path / "site").exists()
    # A prefix that matches: fused regressed from run 3 on, so it is slower than the first run (the default
    # baseline) but not than run 3's commit, and no run is slower than the one before it.
    for baseline, regressions in (([], 1), (["--baseline", f"c{REGRESSED_RUN}a"], 0)):
        r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o",
                            str(tmp_path / "site"), *baseline], capture_output=True, text=True)
        assert r.returncode == 0 and f"{regressions} with a regression" in r.stdout, (baseline, r.stdout, r.stderr)
    # A second machine without that commit: no baseline comparison there (it used to take its first run).
    for k in range(2):
        other = write_gbench(str(tmp_path / "inbox" / f"other{k}.json"), BASE, commit=f"o{k}aaaa", host="other", seed=k,
                             date=f"2026-12-1{k}T10:00:00+00:00")
        perf_history.record(str(store), other)
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o",
                        str(tmp_path / "site2"), "--baseline", f"c{REGRESSED_RUN}a"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (machine,) = [m for m in os.listdir(store) if "other" in m]
    page = open(tmp_path / "site2" / bench_dashboard.machine_dir(machine) /
                bench_dashboard.page_name("fused/V:16000/D:64/manual_time")).read()
    assert "<tr><td>baseline</td><td>-</td></tr>" in page


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, page, tmp_path, shot):
    """Loads page in headless Chromium: (DOM after the scripts ran, browser log)."""
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--allow-file-access-from-files", "--virtual-time-budget=8000", "--window-size=1200,1000",
              f"--user-data-dir={tmp_path / 'chrome-profile'}", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(common + ["--dump-dom", f"file://{page}"], capture_output=True, text=True, timeout=120)
    subprocess.run(common + [f"--screenshot={shot}", f"file://{page}"], capture_output=True, text=True, timeout=120)
    return dom.stdout, dom.stderr


@pytest.mark.skipif(chromium() is None, reason="no Chromium (Debian package chromium) installed")
def test_site_renders_in_headless_chromium(tmp_path):
    store, site = build_site(tmp_path)
    (machine,) = os.listdir(store)
    browser = chromium()
    for name, regressions in (("fused/V:16000/D:64/manual_time", 1), ("chunked/V:16000/D:64/manual_time", 0)):
        page = bench_dashboard.page_name(name)
        shot = tmp_path / (page + ".png")
        dom, log = render(browser, site / machine / page, tmp_path, shot)
        status = re.search(r'<div id="lobench-status"([^>]*)>', dom)
        assert status, f"no status element in the DOM of {page}:\n{dom[:2000]}\n{log[-2000:]}"
        attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', status.group(1)))
        assert attrs["ready"] == "1", attrs
        assert attrs["errors"] == "0", attrs.get("error-text")
        assert attrs["charts"] == "2", attrs
        assert attrs["regressions"] == str(regressions), attrs
        assert "main-svg" in dom  # Plotly drew its SVG
        console = [ln for ln in log.splitlines() if "CONSOLE" in ln and ("error" in ln.lower() or "Uncaught" in ln)]
        assert not console, console
        # every point drawn: 5 runs in each of the two charts, plus one marker per regression
        assert dom.count('class="point plotly-customdata"') == 2 * 5 + regressions
        png = shot.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000  # a rendered page, not a blank one
    dom, log = render(browser, site / "index.html", tmp_path, tmp_path / "index.png")
    assert 'data-errors="0"' in dom and 'data-ready="1"' in dom


def test_page_names_are_one_to_one_and_short():
    a, b = bench_dashboard.page_name("fused/V:1"), bench_dashboard.page_name("fused_V:1")
    assert a != b
    long = bench_dashboard.page_name("x" * 10000)
    assert len(long) < 120 and long != bench_dashboard.page_name("x" * 9999)


def make_paired_store(tmp_path, factors=(1.0, 1.0, 1.3), host="ci", scale=1.0, first_day=1, seed=10):
    """A store of paired entries of one machine (`host`): per entry, a baseline and a candidate of 6 rounds,
    fused `scale` times BASE's, the candidate's fused also times the entry's factor."""
    store, inbox = tmp_path / "history", tmp_path / f"inbox-{host}"
    inbox.mkdir(exist_ok=True)
    for k, f in enumerate(factors):
        sides = {}
        for side, factor in (("base", 1.0), ("cand", f)):
            path = write_gbench(str(inbox / f"{side}{k}.json"), dict(BASE, fused=BASE["fused"] * factor * scale),
                                commit=f"{side}{k}", seed=seed * (k + 1) + (side == "cand"), reps=6, host=host,
                                date=f"2026-12-0{k + first_day}T10:00:00+00:00")
            data = json.load(open(path))
            data["context"]["pairing"] = f"{host}-pair{k}"
            json.dump(data, open(path, "w"))
            sides[side] = path
        perf_history.record(str(store), sides["base"], sides["cand"])
    return store


def test_paired_entries_get_ratio_pages(tmp_path):
    store = make_paired_store(tmp_path)
    (machine,) = os.listdir(store)
    assert all(e.endswith(".paired") for e in os.listdir(store / machine))
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(site)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fused = page_data(site / machine / bench_dashboard.page_name("fused/V:16000/D:64/manual_time (paired)"))
    assert fused["paired"] and [p["verdict"] for p in fused["points"]] == ["same", "same", "slower"]
    assert fused["points"][2]["ratio"] == pytest.approx(1.3, rel=0.05)
    assert all(p["base_commit"].startswith("base") and p["seconds"] > 0 for p in fused["points"])
    index = open(site / "index.html").read()
    table = index[index.index("<table"):]  # regressions first in the table
    assert table.index("fused/V:16000/D:64/manual_time (paired)") < table.index("chunked/V:16000")


def test_a_torn_entry_is_skipped_not_a_baseline(tmp_path):
    store = make_store(tmp_path)
    (machine,) = os.listdir(store)
    newest = sorted(os.listdir(store / machine))[-1]
    (store / machine / "29991231T000000Z_torn.json").write_text('{"benchmarks": [')
    assert perf_history.latest(str(store), str(store / machine / newest)).endswith(newest)
    errors = []
    assert len(perf_history.machines(str(store), errors=errors)[machine]) == 5 and len(errors) == 1


def test_concurrent_records_keep_every_run(tmp_path):
    store, inbox = tmp_path / "history", tmp_path / "inbox"
    inbox.mkdir()
    path = write_gbench(str(inbox / "run.json"), BASE)
    code = f"import sys; sys.path.insert(0, {PLOTS!r}); import perf_history; perf_history.record({str(store)!r}, {path!r})"
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(8)]
    assert all(p.wait() == 0 for p in procs)
    (machine,) = os.listdir(store)
    assert len([n for n in os.listdir(store / machine) if n.endswith(".json")]) == 8
    assert not [n for n in os.listdir(store / machine) if n.startswith(".")]


@pytest.mark.skipif(chromium() is None, reason="no Chromium (Debian package chromium) installed")
def test_paired_page_renders_in_headless_chromium(tmp_path):
    store = make_paired_store(tmp_path)
    site = tmp_path / "site"
    subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(site)],
                   check=True, capture_output=True)
    (machine,) = os.listdir(store)
    page = bench_dashboard.page_name("fused/V:16000/D:64/manual_time (paired)")
    dom, log = render(chromium(), site / machine / page, tmp_path, tmp_path / "paired.png")
    status = re.search(r'<div id="lobench-status"([^>]*)>', dom)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', status.group(1)))
    assert attrs["ready"] == "1" and attrs["errors"] == "0", attrs
    assert attrs["charts"] == "2" and attrs["regressions"] == "1", attrs


@pytest.mark.skipif(chromium() is None, reason="no Chromium (Debian package chromium) installed")
def test_every_machine_on_one_paired_chart(tmp_path):
    store = make_paired_store(tmp_path)
    # a second machine (another host name): its entries land in their own folder of the same store
    make_paired_store(tmp_path, factors=(1.0, 1.02), host="ci2", scale=0.7, first_day=2, seed=50)
    assert len(os.listdir(store)) == 2
    site = tmp_path / "site"
    subprocess.run([sys.executable, os.path.join(PLOTS, "bench_dashboard.py"), str(store), "-o", str(site)],
                   check=True, capture_output=True)
    page = site / bench_dashboard.ACROSS / bench_dashboard.page_name("fused/V:16000/D:64/manual_time (paired)")
    data = page_data(page)
    assert sorted(m["machine"][:3] for m in data["machines"]) == ["ci-", "ci2"]
    assert bench_dashboard.ACROSS in open(site / "index.html").read()
    dom, _ = render(chromium(), page, tmp_path, tmp_path / "across.png")
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r'<div id="lobench-status"([^>]*)>', dom).group(1)))
    assert attrs["ready"] == "1" and attrs["errors"] == "0" and attrs["charts"] == "2", attrs
    assert attrs["regressions"] == "1", attrs
