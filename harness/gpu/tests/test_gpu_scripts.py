"""CPU-side tests of harness/gpu/: the GPU-test verdict on fake gtest and CTest reports (a GPU machine
whose tests skipped must fail; a machine without one reports skipped, not failed; all passed passes),
and the Table II plan (every point once; cuda_dense at P·V >= 2^31 last, apart).

    python3 -m unittest discover -s harness/gpu/tests -v      (ctest: gpu_scripts_test, label cpu)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(GPU))
sys.path.insert(0, GPU)

import gpu_test_verdict as gv  # noqa: E402
import table2_plan as tp  # noqa: E402

# What gtest writes with --gtest_output=xml (1.12): a skipped test has result="skipped" and a <skipped>
# element whose message starts with the file:line of GTEST_SKIP.
GTEST_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="{n}" name="AllTests">\n' \
             '<testsuite name="CudaConformance" tests="{n}">\n'
GTEST_TAIL = "</testsuite>\n</testsuites>\n"
PASSED = '<testcase name="{name}" status="run" result="completed" time="0.5" classname="CudaConformance" />\n'
SKIPPED = ('<testcase name="{name}" status="run" result="skipped" time="0." classname="CudaConformance">\n'
           '<skipped message="variants/cuda/tests/cuda_conformance_test.cpp:99&#x0A;no CUDA device: {why}">'
           '<![CDATA[variants/cuda/tests/cuda_conformance_test.cpp:99\nno CUDA device: {why}]]></skipped>\n'
           '</testcase>\n')
FAILED = ('<testcase name="{name}" status="run" result="completed" time="0.1" classname="CudaConformance">\n'
          '<failure message="cuda_conformance_test.cpp:120&#x0A;Expected: (err) &lt;= (1e-5)" type="">'
          '</failure>\n</testcase>\n')
NOT_RUN = '<testcase name="{name}" status="notrun" result="suppressed" time="0" classname="CudaConformance" />\n'
# CTest's --output-junit: status="notrun" with a <skipped> element for a skipped test.
CTEST = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="Linux" tests="2" failures="0" skipped="1">\n'
         '<testcase name="CudaConformance.A" classname="CudaConformance.A" time="0.1" status="run"/>\n'
         '<testcase name="CudaConformance.B" classname="CudaConformance.B" time="0.0" status="notrun">'
         '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/></testcase>\n</testsuite>\n')

NO_DEVICE = "cudaGetDeviceCount: no CUDA-capable device is detected"


class VerdictTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def report(self, name, *cases):
        path = os.path.join(self.dir.name, name + ".xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(GTEST_HEAD.format(n=len(cases)) + "".join(cases) + GTEST_TAIL)
        return path

    def run_script(self, gpu, runs):
        """The script as check.sh calls it: (exit status, stdout)."""
        cmd = [sys.executable, os.path.join(GPU, "gpu_test_verdict.py"), "--gpu-present", str(gpu)]
        for name, code, path in runs:
            cmd += ["--run", name, str(code), path]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return p.returncode, p.stdout

    def test_gpu_present_and_tests_skipped_fails(self):
        xml = self.report("conf", PASSED.format(name="A"), SKIPPED.format(name="B", why=NO_DEVICE))
        code, out = self.run_script(1, [("cuda_conformance_test", 0, xml)])
        self.assertEqual(code, gv.FAIL, out)
        self.assertTrue(out.startswith("FAIL: 2 tests: 1 passed, 0 failed, 1 skipped"), out)
        self.assertIn("a GPU is present", out)
        self.assertIn("SKIPPED cuda_conformance_test: CudaConformance.B: no CUDA device: " + NO_DEVICE, out)

    def test_gpu_present_and_every_test_skipped_fails(self):
        xml = self.report("conf", *(SKIPPED.format(name=n, why=NO_DEVICE) for n in "ABC"))
        self.assertEqual(self.run_script(1, [("cuda_conformance_test", 0, xml)])[0], gv.FAIL)

    def test_gpu_present_and_a_test_not_run_fails(self):
        xml = self.report("conf", PASSED.format(name="A"), NOT_RUN.format(name="B"))
        code, out = self.run_script(1, [("cuda_conformance_test", 0, xml)])
        self.assertEqual(code, gv.FAIL, out)
        self.assertIn("CudaConformance.B", out)

    def test_no_gpu_and_skipped_with_a_reason_reports_skipped_not_failed(self):
        xml = self.report("conf", *(SKIPPED.format(name=n, why=NO_DEVICE) for n in "AB"))
        code, out = self.run_script(0, [("cuda_conformance_test", 0, xml)])
        self.assertEqual(code, gv.SKIPPED, out)
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("SKIPPED (no GPU): 2 tests: 0 passed, 0 failed, 2 skipped"), first)
        self.assertIn("reason: no CUDA device: " + NO_DEVICE, first)  # file:line dropped, reason kept

    def test_all_passed_passes(self):
        a = self.report("conf", PASSED.format(name="A"), PASSED.format(name="B"))
        b = self.report("sgd", PASSED.format(name="C"))
        code, out = self.run_script(1, [("cuda_conformance_test", 0, a), ("fused_sr_sgd_test", 0, b)])
        self.assertEqual(code, gv.OK, out)
        self.assertEqual(out.strip(), "OK: 3 tests: 3 passed, 0 failed, 0 skipped; 0 executable problems")

    def test_a_failure_fails_with_or_without_a_gpu(self):
        xml = self.report("conf", PASSED.format(name="A"), FAILED.format(name="B"))
        for gpu in (0, 1):
            code, out = self.run_script(gpu, [("cuda_conformance_test", 1, xml)])
            self.assertEqual(code, gv.FAIL, out)
            self.assertIn("FAILED  cuda_conformance_test: CudaConformance.B: Expected: (err) <= (1e-5)", out)

    def test_a_crash_without_a_report_fails(self):
        missing = os.path.join(self.dir.name, "never_written.xml")
        code, out = self.run_script(0, [("cuda_conformance_test", 139, missing)])
        self.assertEqual(code, gv.FAIL, out)
        self.assertIn("no readable report", out)
        self.assertIn("exit status 139", out)

    def test_a_nonzero_exit_with_a_clean_report_fails(self):
        xml = self.report("conf", PASSED.format(name="A"))
        code, out = self.run_script(1, [("cuda_conformance_test", 134, xml)])
        self.assertEqual(code, gv.FAIL, out)

    def test_no_test_at_all_fails(self):
        xml = self.report("conf")
        self.assertEqual(self.run_script(0, [("cuda_conformance_test", 0, xml)])[0], gv.FAIL)
        self.assertEqual(self.run_script(1, [])[0], gv.FAIL)

    def test_ctest_junit_reports_are_read_too(self):
        path = os.path.join(self.dir.name, "ctest.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(CTEST)
        self.assertEqual([o for _, o, _ in gv.test_cases(path)], ["passed", "skipped"])
        self.assertEqual(self.run_script(1, [("ctest", 0, path)])[0], gv.FAIL)
        self.assertEqual(self.run_script(0, [("ctest", 0, path)])[0], gv.SKIPPED)


class Table2PlanTest(unittest.TestCase):
    GRID = {"B": [32, 128], "N": [32, 128], "V": [100000, 200000, 500000, 1000000],
            "variants": ["cuda_dense", "cuda_chunked", "cuda_fused"]}

    @staticmethod
    def points(args):
        a = dict(zip(args[0::2], args[1::2]))
        for B in a["--B"].split(","):
            for N in a["--N"].split(","):
                for V in a["--V"].split(","):
                    for var in a["--variants"].split(","):
                        yield var, int(B), int(N), int(V)

    def test_every_point_once_and_dense_at_2_31_last_in_its_own_processes(self):
        groups = tp.plan(self.GRID)
        seen = []
        for group, args in groups:
            pts = list(self.points([x for x in args if x != "--no-accuracy"]))
            seen += pts
            self.assertEqual("--no-accuracy" not in args, group == "accuracy", (group, args))
            big = [p for p in pts if p[0] == "cuda_dense" and p[1] * p[2] * p[3] >= 2**31]
            if group == "dense_big":
                self.assertEqual(len(big), len(pts), args)  # nothing else shares such a process
            else:
                self.assertEqual(big, [], (group, args))
        expected = [(v, B, N, V) for v in self.GRID["variants"] for B in self.GRID["B"] for N in self.GRID["N"]
                    for V in self.GRID["V"]]
        self.assertEqual(sorted(seen), sorted(expected))
        order = [g for g, _ in groups]
        self.assertEqual(order, sorted(order, key=["accuracy", "large", "dense_big"].index))
        big = [(B, N, V) for v, B, N, V in expected if v == "cuda_dense" and B * N * V >= 2**31]
        # Table II's: B·N = 16384 at V = 200k, 500k, 1M and B·N = 4096 at V = 1M (twice).
        self.assertEqual(len(big), 5)
        firsts = [min(B * N * V for _, B, N, V in self.points(a[:-1])) for g, a in groups if g == "dense_big"]
        self.assertEqual(firsts, sorted(firsts))

    def test_the_committed_args_file(self):
        grid = tp.read_grid(os.path.join(ROOT, "harness/sweeps/table2_gpu.args"))
        self.assertEqual(grid, self.GRID)
        out = subprocess.run([sys.executable, os.path.join(GPU, "table2_plan.py"),
                              os.path.join(ROOT, "harness/sweeps/table2_gpu.args")],
                             capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        self.assertEqual(lines[0], "accuracy\t--B 32,128 --N 32,128 --V 100000 "
                                   "--variants cuda_dense,cuda_chunked,cuda_fused")
        self.assertEqual(sum(ln.startswith("dense_big\t") for ln in lines), 3)

    def test_no_dense_no_last_group(self):
        grid = dict(self.GRID, variants=["cuda_fused"])
        self.assertEqual([g for g, _ in tp.plan(grid)], ["accuracy", "large"])


class CheckScriptTest(unittest.TestCase):
    """check.sh itself, on a copy of harness/gpu without .gpu_deps, with only its first stages selected."""

    def test_missing_gpu_deps_is_said_first_and_gates_the_rest(self):
        with tempfile.TemporaryDirectory() as d:
            gpu = os.path.join(d, "root", "harness", "gpu")
            os.makedirs(gpu)
            for f in ("check.sh", "check_lib.sh", "gpu_test_verdict.py", "table2_plan.py"):
                with open(os.path.join(GPU, f), encoding="utf-8") as src, \
                        open(os.path.join(gpu, f), "w", encoding="utf-8") as dst:
                    dst.write(src.read())
            env = dict(os.environ, LOBENCH_DEPS="private", LOBENCH_GPU_STAGES="configure",  # deps: always
                       LOBENCH_GPU_WORK=os.path.join(d, "work"), LOBENCH_GPU_BUILD_DIR=os.path.join(d, "build"))
            out = os.path.join(d, "out")
            p = subprocess.run(["bash", os.path.join(gpu, "check.sh"), out], env=env, capture_output=True,
                               text=True, timeout=120, check=False)
            lines = p.stdout.splitlines()
            self.assertTrue(lines[0].startswith(".gpu_deps: MISSING"), lines[:2])
            self.assertIn('carry=[".gpu_deps"]', lines[0])
            self.assertIn("plan: budget 520 s", p.stdout)
            self.assertIn("total            75 of 520 s", p.stdout)  # deps 20 + configure 40 + summary 15
            self.assertEqual(p.returncode, 1, p.stdout[-2000:])
            with open(os.path.join(out, "stages.txt"), encoding="utf-8") as f:
                stages = {ln.split()[0]: ln.split()[1] for ln in f if ln.strip()}
            self.assertEqual(stages["deps"], "FAIL")
            self.assertEqual(stages["configure"], "SKIPPED")
            self.assertEqual(stages["build_lobench"], "SKIPPED")  # not selected
            self.assertEqual(stages["gpu_tests"], "SKIPPED")
            self.assertLessEqual(len(os.listdir(out)), 7)  # the device tool returns at most eight files
            self.assertIn("logs.tar.gz", os.listdir(out))

    def test_the_default_plan_fits_the_budget(self):
        p = subprocess.run(["bash", "-c", f"source {GPU}/check_lib.sh; budget=520; plan_init 520 ''; planned_total"],
                           capture_output=True, text=True, check=True)
        self.assertLessEqual(int(p.stdout), 520)
        self.assertGreaterEqual(int(p.stdout), 480)  # and uses it


if __name__ == "__main__":
    unittest.main()
