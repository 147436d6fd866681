"""scripts/results_tables.py: a stale block is caught (exit 1 and a diff), a rewrite makes it current, and
malformed markers, failing commands and uncommitted inputs are refused (exit 2) with every file untouched.

The first test edits one digit of a real generated block of results/elmo-cpu.md and of results/seqrec-cpu.md
(a copy in a temporary folder, its commands run from this checkout); the rest use a small git repository of their own."""
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "scripts", "results_tables.py")


def tables(*args, root=REPO):
    return subprocess.run([sys.executable, SCRIPT, "--root", str(root), *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("name, block, row_start", [
    ("elmo-cpu.md", "operand_zen5", "| delicious |"),
    # the same-code ratio of issue 38: an edited ratio of the paper's model to the S3-Rec-settings baseline
    ("seqrec-cpu.md", "s3rec_baseline", "| beauty_loo_fused_nobias_plateau_cont2_s0 | Beauty | fused, bias none |"),
])
def test_edited_number_in_a_real_document_is_caught(tmp_path, name, block, row_start):
    doc = tmp_path / name
    shutil.copy(os.path.join(REPO, "results", name), doc)
    # (that the committed document is current is results_tables_current's check, and the last assertion
    # here: each regeneration of these blocks costs seconds, so it is not checked a third time first)
    text = doc.read_text(encoding="utf-8")
    begin = text.index(f"<!-- {block}:begin")
    row = text.index(row_start, begin)
    m = re.compile(r"\d").search(text, row + len(row_start))  # the first digit of the row's numbers
    edited = text[:m.start()] + str((int(m.group()) + 1) % 10) + text[m.end():]
    doc.write_text(edited, encoding="utf-8")
    # (--block: only the edited block is made again, seconds less than the whole document's)
    r = tables("--check", doc, "--block", block)
    assert r.returncode == 1, r.stderr
    assert "-" + edited[row:edited.index("\n", row)] in r.stdout  # the diff shows the edited line
    assert doc.read_text(encoding="utf-8") == edited  # --check writes nothing
    assert tables(doc, "--block", block).returncode == 0
    assert doc.read_text(encoding="utf-8") == text, "the rewrite gives another document: is the committed one current?"


def test_block_remakes_only_the_named_blocks(repo):
    doc = repo / "doc.md"
    stale = "<!-- {0}:begin (generated: python3 show.py data.txt) -->\n| stale |\n<!-- {0}:end -->\n"
    doc.write_text("# doc\n" + stale.format("one") + "text\n" + stale.format("two"))
    subprocess.run(["git", "-C", str(repo), "add", "doc.md"], check=True)
    r = tables("--check", doc, "--block", "two", root=repo)
    assert r.returncode == 1 and "(1 blocks checked)" in r.stderr, r
    assert tables(doc, "--block", "two", root=repo).returncode == 0
    text = doc.read_text()
    assert text.count("| stale |") == 1 and text.index("| stale |") < text.index("text")  # block one as it was
    assert "| 3 | 4 |" in text[text.index("two:begin"):]
    r = tables("--check", doc, "--block", "three", root=repo)
    assert r.returncode == 2 and "--block three: no such block" in r.stderr, r
    assert doc.read_text() == text


@pytest.fixture
def repo(tmp_path):
    """A git repository with a committed data file and a script that prints it as a table."""
    (tmp_path / "data.txt").write_text("1 2\n3 4\n")
    (tmp_path / "show.py").write_text(
        "import sys\nprint('| a | b |')\nprint('|---|---|')\n"
        "for line in open(sys.argv[1]):\n    print('| ' + ' | '.join(line.split()) + ' |')\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "data.txt", "show.py"], check=True)
    return tmp_path


def doc_with(repo, body):
    doc = repo / "doc.md"
    doc.write_text("# title\n\n" + body + "\nafter\n")
    return doc


BLOCK = "<!-- t:begin (generated: python3 show.py data.txt) -->\n{}<!-- t:end -->\n"


def test_rewrite_then_check_then_stale(repo):
    doc = doc_with(repo, BLOCK.format("old\n"))
    assert tables("--check", doc, root=repo).returncode == 1
    assert tables(doc, root=repo).returncode == 0
    assert doc.read_text() == "# title\n\n" + BLOCK.format("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n") + "\nafter\n"
    assert tables("--check", doc, root=repo).returncode == 0
    (repo / "data.txt").write_text("1 2\n3 5\n")  # the file changes, the document does not
    r = tables("--check", doc, root=repo)
    assert r.returncode == 1 and "+| 3 | 5 |" in r.stdout and "-| 3 | 4 |" in r.stdout


@pytest.mark.parametrize("body, message", [
    (BLOCK.format("x\n").replace("<!-- t:end -->\n", ""), "has no end marker"),
    ("<!-- t:end -->\n", "without its begin"),
    (BLOCK.format("x\n").replace("t:end", "u:end"), "without its begin"),
    (BLOCK.format("x\n") + BLOCK.format("y\n"), "a second block named 't'"),
    (BLOCK.format("x\n").replace("(generated: ", "(made by: "), "malformed marker"),
    (BLOCK.format("x\n").replace("show.py data.txt", "show.py missing/data.txt"), "does not exist"),
    (BLOCK.format("x\n").replace("show.py data.txt", "show.py nothing.txt"), "exited 1"),
    (BLOCK.format("x\n").replace("show.py data.txt", "show.py untracked.txt"), "git does not track"),
    (BLOCK.format("x\n").replace("show.py data.txt", "show.py /proc/cpuinfo"), "outside the repository"),
    (BLOCK.format("x\n").replace("show.py data.txt", "show.py ../data.txt"), "outside the repository"),
])
def test_refused_and_untouched(repo, body, message):
    (repo / "untracked.txt").write_text("5 6\n")
    doc = doc_with(repo, body)
    before = doc.read_text()
    for mode in ([], ["--check"]):
        r = tables(*mode, doc, root=repo)
        assert r.returncode == 2 and message in r.stderr, (mode, r.returncode, r.stderr)
        assert doc.read_text() == before
    assert sorted(os.listdir(repo)) == sorted(["data.txt", "show.py", "doc.md", "untracked.txt", ".git"])  # no temp file left


def test_markers_in_a_code_fence_are_examples(repo):
    doc = doc_with(repo, "```\n" + BLOCK.format("anything\n") + "```\n")
    assert tables("--check", doc, root=repo).returncode == 0


def test_double_star_reads_a_folder_and_its_subfolders(repo):
    os.makedirs(repo / "runs" / "partial")
    (repo / "runs" / "a.txt").write_text("1 2\n")
    (repo / "runs" / "partial" / "b.txt").write_text("3 4\n")
    (repo / "cat.py").write_text("import sys\nfor p in sys.argv[1:]:\n    print(p, open(p).read().strip())\n")
    subprocess.run(["git", "-C", str(repo), "add", "runs", "cat.py"], check=True)
    doc = doc_with(repo, "<!-- t:begin (generated: python3 cat.py runs/**/*.txt) -->\n<!-- t:end -->\n")
    assert tables(doc, root=repo).returncode == 0
    assert "runs/a.txt 1 2\nruns/partial/b.txt 3 4\n" in doc.read_text()
    (repo / "runs" / "partial" / "c.txt").write_text("5 6\n")  # a new file the glob now reads, not committed
    r = tables("--check", doc, root=repo)
    assert r.returncode == 2 and "runs/partial/c.txt, which git does not track" in r.stderr


def test_an_untracked_file_of_a_run_still_writing_is_named_as_such(repo):
    # A lobench run writing into a folder a block reads leaves OUT.lock and OUT.partial-* there until it
    # publishes OUT: the refusal says so, so that the user waits for the run instead of committing them.
    os.makedirs(repo / "runs")
    (repo / "runs" / "a.txt").write_text("1 2\n")
    (repo / "cat.py").write_text("import sys, os\nfor p in sys.argv[1:]:\n    print(p, sorted(os.listdir(p)))\n")
    subprocess.run(["git", "-C", str(repo), "add", "runs", "cat.py"], check=True)
    doc = doc_with(repo, "<!-- t:begin (generated: python3 cat.py runs) -->\n<!-- t:end -->\n")
    assert tables(doc, root=repo).returncode == 0
    (repo / "runs" / "b.h5.lock").write_text("")
    r = tables("--check", doc, root=repo)
    assert r.returncode == 2 and "runs/b.h5.lock, which git does not track" in r.stderr
    assert "a run still writing there" in r.stderr
    os.remove(repo / "runs" / "b.h5.lock")
    (repo / "runs" / "notes.txt").write_text("x\n")  # any other untracked file: no such guess
    r = tables("--check", doc, root=repo)
    assert r.returncode == 2 and "runs/notes.txt, which git does not track" in r.stderr
    assert "still writing" not in r.stderr
