"""scripts/results_prose_numbers.py: prose decimals that no generated block holds are listed, those a
not-results declaration names are set aside and counted, a declared number the prose never uses is
reported, numbers in a paragraph marked no-file are counted apart, and a declaration without its reason is
refused (exit 2)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "results_prose_numbers.py")

BLOCK = "<!-- t:begin (generated: python3 show.py) -->\n| 0.25 |\n<!-- t:end -->\n"


def listing(tmp_path, text, *args):
    doc = tmp_path / "doc.md"
    doc.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, SCRIPT, str(doc), *args], capture_output=True, text=True)


def test_block_numbers_pass_and_typed_ones_are_listed(tmp_path):
    text = BLOCK + "The run gave 0.25 and 0.31 at lr 0.001, 1.45x faster (OpenBLAS 0.3.21, 4.4e-6).\n```\n0.77 in a fence\n```\n"
    r = listing(tmp_path, text, "-v")
    assert r.returncode == 0, r.stderr
    assert "3 of 4 prose decimals in no block" in r.stdout  # a version and an exponent are not decimals
    assert "[0.31, 0.001, 1.45]" in r.stdout and "0.77" not in r.stdout


def test_declared_numbers_are_set_aside_and_counted(tmp_path):
    text = (BLOCK + "<!-- not-results: 0.0605 0.0318 (P5's published figures); 0.001 (learning rate) -->\n"
            "Published 0.0605 / 0.0318 at lr 0.001; ours 0.0412.\n")
    r = listing(tmp_path, text, "-v")
    assert r.returncode == 0, r.stderr
    assert "1 of 4 prose decimals in no block (set aside: 3 declared not results)" in r.stdout
    assert "[0.0412]" in r.stdout


def test_a_declared_number_the_prose_does_not_use_is_reported(tmp_path):
    r = listing(tmp_path, "<!-- not-results: 0.5 0.9 (settings) -->\ndropout 0.5\n")
    assert r.returncode == 0 and "declared but unused: 0.9" in r.stdout, r.stdout


def test_a_declaration_without_its_reason_is_refused(tmp_path):
    r = listing(tmp_path, "<!-- not-results: 0.5 0.9 -->\ndropout 0.5\n")
    assert r.returncode == 2 and "doc.md:1: not-results group '0.5 0.9' is not 'NUMBERS (REASON)'" in r.stderr


def test_no_file_marks_the_next_paragraph_only(tmp_path):
    text = ("<!-- no-file: copied from the terminal -->\n\n(No run file.)\n| 1.25 | 2.50 |\n\nLater 3.75 typed.\n")
    r = listing(tmp_path, text, "-v")
    assert r.returncode == 0, r.stderr
    assert "1 of 3 prose decimals in no block (set aside: 2 in text marked no-file)" in r.stdout
    assert "[3.75]" in r.stdout and "1.25" not in r.stdout.split("\n", 1)[1]


def test_declarations_in_a_code_fence_are_examples(tmp_path):
    r = listing(tmp_path, "```\n<!-- not-results: 0.5 (dropout) -->\n<!-- no-file: x -->\n```\nlr 0.5 here\n")
    assert r.returncode == 0 and "1 of 1 prose decimals in no block" in r.stdout and "declared" not in r.stdout, r.stdout
