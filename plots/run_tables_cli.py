"""The command line of the scripts that print one Markdown table from run files (square_products_table.py,
products_paths_table.py, cpu_targets_table.py): `SCRIPT RUN.h5 [MORE.h5 ...]`, --help from the script's
docstring, and every file read before a line is printed, so that a file that cannot be read ends the script
with one line on stderr naming it (exit status 1), never half a table."""
import argparse
import os
import sys

from lobench_results import RunFileError, read


def runs_from_command_line(doc, reader=read):
    """[(path, reader(path))] for the paths on the command line (reader: lobench_results.read by default)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    try:
        return [(path, reader(path)) for path in args.runs]
    except RunFileError as e:
        sys.exit(f"{os.path.splitext(os.path.basename(sys.argv[0]))[0]}: {e}")
