"""The command line the repository's checkers share (check_doc_citations.py, check_one_writer.py):
`SCRIPT [ROOT]` checks ROOT (default: this repository) and prints each error; `SCRIPT --self-test` runs
the checker's own test. Exit 0 when clean, 1 with errors."""
import os


def run(argv, check, self_test, failure, success):
    """check(root) -> [error, ...]; failure: a message with {n}, the error count; success: printed when clean."""
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print("error:", e)
    if errors:
        print(failure.format(n=len(errors)))
        return 1
    print(success)
    return 0
