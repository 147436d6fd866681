"""scripts/files_at_commit.py: a command's results/ arguments are read as committed at the given commit (not
as in the working tree), and an unknown commit or a command without a results/ path is refused (exit 2)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "scripts", "files_at_commit.py")
CAT = ["python3", "-c", "import sys; sys.stdout.write(open(sys.argv[1], encoding='utf-8').read())"]


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=REPO)


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout


def test_reads_the_file_as_committed():
    # the commit that added results/SCHEMA.md: its text there differs from today's
    commit = git("log", "--diff-filter=A", "--format=%H", "--", "results/SCHEMA.md").split()[-1]
    r = run(commit, "--", *CAT, "results/SCHEMA.md")
    assert r.returncode == 0, r.stderr
    assert r.stdout == git("show", f"{commit}:results/SCHEMA.md")


def test_refuses_an_unknown_commit_and_a_command_without_results_paths():
    r = run("0" * 40, "--", *CAT, "results/SCHEMA.md")
    assert r.returncode == 2 and "files_at_commit:" in r.stderr
    r = run("HEAD", "--", *CAT, "README.md")
    assert r.returncode == 2 and "no path under results/" in r.stderr
    r = run("HEAD", *CAT)
    assert r.returncode == 2 and "usage" in r.stderr
