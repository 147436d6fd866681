"""lobench.run(): a `lobench run` sweep from Python (a notebook), returning its rows as a pandas DataFrame.

    import lobench
    df = lobench.run(variants=["fused", "chunked", MyVariant()], V=[100_000, 200_000], B=32, N=32, D=128, L=8)

It is the `run` command itself, not a second driver: the options go to lobench's engine (lobench._engine,
harness/python/sweep_call.cpp) as the command-line words `lobench run` takes, so the engine checks them with
its own rules and messages, plans every row's memory before anything runs, measures, scores against the
float64 reference and writes the run file exactly as `lobench run` does, Python variants' rows in a child
process (isolation) included. The DataFrame is that run file's /results table read back
(lobench.results.read), so its columns are the file's (results/SCHEMA.md; units in df.attrs["units"]).
"""
from __future__ import annotations

import logging
import os
import pickle
import re
import shutil
import sys
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import python_variants as pv

log = logging.getLogger("lobench")

# Options of `lobench run` that lobench.run takes otherwise or not at all: `format` says what the command
# prints on stdout (lobench.run prints nothing there; it returns the rows); `variants` and `out` are named
# parameters of run().
_NOT_KEYWORDS = {"format": "lobench.run returns the rows instead of printing them, so it has no format "
                           "(the DataFrame holds every column of the run file)"}

# The engine's progress line (harness/sweep/progress.cpp).
_PROGRESS = re.compile(r"progress: (\d+)% of the work \((\d+) of (\d+) (\w+)\), elapsed (\S+), ETA (\S+)")


def run(variants: Any = None, *, out: Optional[str] = None, progress: Optional[bool] = None, **options):
    """Runs a `lobench run` sweep in this process and returns its rows as a pandas.DataFrame.

    variants: a list (or one) of built-in or plug-in variant names ("fused"), Python variant objects
    (lobench/python_variants.py's protocol), "module:Class" / "file.py:Class" specs, or framework peers'
    short names ("jax_dense"); None: the command's default. options: every option of `lobench run` as a
    keyword, its name with '-' as '_' (V=[100_000, 200_000], block_v=0, mem_limit="20G", no_accuracy=True):
    a list or tuple for a comma-separated list (one row per value of an axis), True for a flag. out: the run
    file to write (None: a temporary one, removed after reading it back). progress: None shows a progress
    bar when interactive (a notebook, or stderr a terminal), through tqdm when installed; True always;
    False never. Nothing is printed on stdout; the engine's notes go to the logger "lobench" (INFO).

    Returns the file's /results table (with resume=True, its earlier rows too), its root attributes and
    {"units": {column: unit}} in df.attrs; with list=True the lines `lobench run --list` prints, one row each.
    Raises ValueError for invalid input (the engine's message, as `lobench run` prints it with exit status 2),
    TypeError for a keyword that is no option, KeyboardInterrupt when interrupted (the rows finished so far
    are kept in `out`). Failed rows do not raise: their status is "failed" and their reason says why (a
    RuntimeWarning counts them), as `lobench run` records them and exits 1.
    """
    try:
        from . import _engine
    except ImportError as e:
        raise ImportError(f"lobench.run needs lobench._engine, built with the C++ tree (cmake "
                          f"-DLOBENCH_PYTHON_PACKAGE=ON) or by `pip install .` ({e})") from e
    args = _option_words(options, dict(_engine.run_options()))
    listing = bool(options.get("list"))
    if not listing:
        from . import results  # h5py and pandas: said before anything runs when missing
    work = tempfile.mkdtemp(prefix="lobench-run-")
    try:
        chosen = _Variants(_engine, isolated=not options.get("no_isolate"))
        if variants is not None:
            args += ["--variants", ",".join(chosen.resolve(_entries(variants)))]
        path = os.fspath(out) if out is not None else os.path.join(work, "run.h5")
        if out is not None or not listing:
            args += ["--out", path]
        shown = " ".join(["lobench", "run"] + args)  # what the file's argv records: the equivalent command
        sink = _Lines(_show_progress(progress) and not listing)
        try:
            words = ["run"] + args + ["--format", "jsonl"]  # jsonl: the notes on stderr, apart from the rows
            code = _engine.sweep(words, f"lobench.run: {shown}", chosen.row_command(work, words), sink.line)
        except KeyboardInterrupt as e:
            if out is None and str(e):  # the message names the temporary file, removed below
                raise KeyboardInterrupt(f"{e} (out=None: that temporary file is removed; pass out=PATH to keep the "
                                        "finished rows and resume=True to continue)") from None
            raise
        finally:
            sink.close()
            chosen.release()
        if listing:
            return [line for line in sink.out if line and not re.fullmatch(r"\d+ rows", line)]
        df = results.read(path)
        df.attrs["units"] = dict(_engine.result_units())
        failed = int((df["status"] == "failed").sum()) if code else 0
        if failed:
            warnings.warn(f"lobench.run: {failed} of {len(df)} rows failed (their status and reason columns say why)",
                          RuntimeWarning, stacklevel=2)
        return df
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _entries(variants) -> List[Any]:
    """variants as a list of entries: a str is split at commas, as `--variants` splits it."""
    if isinstance(variants, (str, bytes)) or not isinstance(variants, (list, tuple)):
        variants = [variants]
    found = []
    for v in variants:
        found += v.split(",") if isinstance(v, str) else [v]
    return found


def _option_words(options: Dict[str, Any], table: Dict[str, bool]) -> List[str]:
    """The keywords as `lobench run` words: --NAME VALUE (lists comma-joined), --FLAG for True."""
    words = []
    for keyword, value in options.items():
        name = "--" + keyword.replace("_", "-")
        if keyword in _NOT_KEYWORDS:
            raise TypeError(f"lobench.run() takes no '{keyword}': {_NOT_KEYWORDS[keyword]}")
        if name not in table:
            known = ", ".join(sorted(n[2:].replace("-", "_") for n in table if n[2:] not in _NOT_KEYWORDS))
            raise TypeError(f"lobench.run() got an unexpected keyword argument '{keyword}' (the options of "
                            f"`lobench run`, '-' written '_': {known})")
        if value is None:
            continue  # the command's default
        if table[name]:
            if not isinstance(value, bool):
                raise TypeError(f"lobench.run(): '{keyword}' is a flag ({name}): True or False, got {value!r}")
            words += [name] if value else []
        else:
            words += [name, _value_text(value)]
    return words


def _value_text(value) -> str:
    """An option's value as the command line writes it: a list comma-joined, a number in Python's notation."""
    if isinstance(value, (list, tuple, range)) or type(value).__name__ == "ndarray":
        return ",".join(_value_text(v) for v in list(value))
    if hasattr(value, "item") and callable(value.item) and type(value).__module__ == "numpy":
        value = value.item()  # a NumPy scalar
    if isinstance(value, float):
        return repr(value)
    return str(value)


class _Variants:
    """The Python variants of one call, registered in the engine under their names, and what the child
    process of an isolated row needs to register them again (lobench/_row_child.py)."""

    def __init__(self, engine, isolated: bool):
        self._engine = engine
        self._isolated = isolated
        self._payload = []  # ("spec", text) or ("object", pickled bytes), with the origin
        self._names = {}    # name -> (object, where), registered by this call
        self._loaded = {}   # spec -> object
        self._peers = pv.python_peers()
        for obj in pv.entry_point_variants():  # always, as `python -m lobench` does (the child loads them too)
            self._register(obj, f"entry point {type(obj).__module__}", None)
        self._peers = {n: s for n, s in self._peers.items() if n not in self._names}

    def resolve(self, entries: Sequence[Any]) -> List[str]:
        """The --variants names of the entries, registering the Python variants among them."""
        names = []
        for entry in entries:
            if isinstance(entry, str) and (pv.is_spec(entry) or entry in self._peers):
                spec = self._peers.get(entry, entry)
                if spec not in self._loaded:  # a spec named twice is one variant
                    self._loaded[spec] = pv.load_spec(spec)
                names.append(self._register(self._loaded[spec], spec, ("spec", spec)))
            elif isinstance(entry, str):
                names.append(entry)  # a built-in's or a plug-in's name: the engine checks it
            else:
                where = f"{type(entry).__module__}.{type(entry).__qualname__} object"
                pv.check_protocol(entry, where)
                names.append(self._register(entry, where, ("object", entry)))
        return names

    def _register(self, obj, where: str, child: Optional[Tuple[str, Any]]) -> str:
        name = obj.name
        if name in self._names:
            if self._names[name][0] is obj:
                return name  # the same object named twice is one variant
            raise ValueError(f"python variant {name} ({where}): the name is taken by {self._names[name][1]} in this call")
        origin = pv.origin_of(obj, where)
        _slot(self._engine, name, where, origin).target = obj
        self._names[name] = (obj, where)
        if child is not None:
            self._payload.append((child[0], self._for_child(name, child[1]) if child[0] == "object" else child[1], origin))
        return name

    def _for_child(self, name: str, obj) -> bytes:
        """The object pickled for an isolated row's process. A class the child can import (from the same
        sys.path) goes by reference; one it cannot (defined in a notebook or a script's __main__, or in a
        module loaded from a file by hand) goes by value, which needs cloudpickle."""
        if not self._isolated:
            return b""
        module = sys.modules.get(type(obj).__module__)
        by_value = module is None or not _importable(module.__name__)
        try:
            import cloudpickle
        except ImportError:
            if by_value:
                raise ValueError(
                    f"python variant {name}: its rows run in a child process (isolation, as in `lobench run`), which "
                    f"gets it by pickling, and its class {type(obj).__qualname__} is defined in {type(obj).__module__} "
                    f"(a notebook, a script or a module loaded by hand), which the child cannot import: pip install "
                    f"cloudpickle, define the class in a module or file (or pass 'file.py:Class'), or pass "
                    f"no_isolate=True") from None
            return self._dumps(pickle.dumps, name, obj)
        if by_value and module is not None and module.__name__ != "__main__":
            cloudpickle.register_pickle_by_value(module)  # (__main__ goes by value anyway)
        try:
            return self._dumps(cloudpickle.dumps, name, obj)
        finally:
            if by_value and module is not None and module.__name__ != "__main__":
                cloudpickle.unregister_pickle_by_value(module)

    @staticmethod
    def _dumps(dumps, name: str, obj) -> bytes:
        try:
            return dumps(obj)
        except Exception as e:
            raise ValueError(f"python variant {name}: its rows run in a child process (isolation, as in `lobench "
                             f"run`), which gets it by pickling, and pickling failed ({type(e).__name__}: {e}): define "
                             f"its class in a module or file (pass 'file.py:Class'), or pass no_isolate=True") from e

    def row_command(self, work: str, args: List[str]) -> List[str]:
        """How the engine starts an isolated row: this interpreter running lobench/_row_child.py with the
        variants of this call (a file in `work`) and the same arguments."""
        payload = os.path.join(work, "variants.pickle")
        with open(payload, "wb") as f:
            pickle.dump({"sys_path": list(sys.path), "variants": self._payload}, f)
        package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        boot = f"import sys; sys.path.insert(0, {package_parent!r}); from lobench._row_child import main; main()"
        return [sys.executable, "-c", boot, payload] + args

    def release(self) -> None:
        """The slots of this call forget their objects (the engine keeps the names registered)."""
        for name in self._names:
            _SLOTS[name].target = None


def _importable(module: str) -> bool:
    """Whether a fresh interpreter with this sys.path imports the module's top-level package by its name."""
    import importlib.machinery

    top = module.split(".")[0]
    if top == "__main__":
        return False
    if top in sys.builtin_module_names:
        return True
    return importlib.machinery.PathFinder.find_spec(top, sys.path) is not None


class _Slot:
    """What the engine holds for a Python variant's name: registered once per process (the engine's registry
    cannot drop a variant), it forwards to the object of the current call, so that a notebook can run a
    redefined class under the same name again. The origin recorded in every row is the first registration's
    (its `where` the same by construction; the frameworks it lists are those loaded then)."""

    def __init__(self, name: str, where: str):
        self.name = name
        self.where = where
        self.target = None

    def __getattr__(self, attr):
        target = self.__dict__.get("target")
        if target is None:
            raise AttributeError(f"python variant {self.name} belongs to no lobench.run call now")
        return getattr(target, attr)


_SLOTS: Dict[str, _Slot] = {}


def _slot(engine, name: str, where: str, origin: str) -> _Slot:
    if name not in _SLOTS:
        slot = _Slot(name, where)
        engine.register_python_variant(slot, origin)  # ValueError: a built-in's or a plug-in's name
        _SLOTS[name] = slot
    elif _SLOTS[name].where != where:
        raise ValueError(f"python variant {name} ({where}): this process registered that name from "
                         f"{_SLOTS[name].where} already, and the engine keeps one origin per name (every row records "
                         f"it): give this variant another `name`, or restart the process (the notebook's kernel)")
    return _SLOTS[name]


def _show_progress(progress: Optional[bool]) -> bool:
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"lobench.run(): 'progress' is True, False or None (when interactive), got {progress!r}")
        return progress
    if "ipykernel" in sys.modules:  # a Jupyter kernel: the notebook shows stderr under the cell
        return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Lines:
    """The engine's output, line by line: stdout lines kept (--list), the progress line drawn as a bar,
    notes logged (and shown on the bar while nothing else moves). Never raises (sweep_call.cpp)."""

    def __init__(self, bar: bool):
        self.out: List[str] = []
        self._bar = _make_bar() if bar else None

    def line(self, stream: str, text: str) -> None:
        try:
            if stream == "out":
                self.out.append(text)
                return
            m = _PROGRESS.fullmatch(text)
            if m:
                if self._bar:
                    self._bar.update(int(m.group(1)), f"{m.group(2)}/{m.group(3)} {m.group(4)}, ETA {m.group(6)}")
                return
            log.info("%s", text)
            if self._bar and not text.startswith("summary:"):
                self._bar.note(text)
        except Exception as e:  # a broken bar must not fail the sweep
            log.warning("lobench.run: progress display failed: %s: %s", type(e).__name__, e)
            self._bar = None

    def close(self) -> None:
        if self._bar:
            self._bar.close()


def _make_bar():
    try:
        with warnings.catch_warnings():  # a notebook without ipywidgets: tqdm's text bar, without its warning
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
    except ImportError:
        return _PlainBar()
    return _TqdmBar(tqdm)


def _short(note: str) -> str:
    """A note's first clause, for the bar's label ("measuring the machine's limits on 2 threads"; the
    opening note "lobench run: 6 rows -> FILE (memory limit ...)" as "6 rows")."""
    if note.startswith("lobench run: "):
        note = note[len("lobench run: "):].split(" -> ")[0]
    return re.split(r" \(|: ", note, maxsplit=1)[0][:60]


class _TqdmBar:
    def __init__(self, tqdm):
        self._bar = tqdm(total=100, unit="%", desc="lobench.run", file=sys.stderr,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}]{postfix}")

    def note(self, text: str) -> None:
        self._bar.set_description_str(f"lobench.run: {_short(text)}")

    def update(self, percent: int, state: str) -> None:
        self._bar.set_description_str("lobench.run")
        self._bar.n = percent
        self._bar.set_postfix_str(state)  # refreshes

    def close(self) -> None:
        self._bar.close()


class _PlainBar:
    """One line on stderr, rewritten in place (without tqdm)."""

    def __init__(self):
        self._label, self._state, self._width = "starting", "", 0

    def note(self, text: str) -> None:
        self._label = _short(text)
        self._draw()

    def update(self, percent: int, state: str) -> None:
        self._label, self._state = f"{percent:3d}% of the work", state
        self._draw()

    def _draw(self) -> None:
        text = f"lobench.run: {self._label}" + (f" ({self._state})" if self._state else "")
        sys.stderr.write("\r" + text.ljust(self._width))
        sys.stderr.flush()
        self._width = len(text)

    def close(self) -> None:
        if self._width:
            sys.stderr.write("\n")
            sys.stderr.flush()
