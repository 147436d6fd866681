"""A one-node Slurm cluster in a temporary folder, for tests that run the docs' cluster scripts.

`OneNodeSlurm(folder)` writes a slurm.conf for this machine (its name, CPUs and memory as `slurmd -C`
reports them), starts munged with a fresh key and slurmctld and slurmd in the foreground on free ports,
everything (state, spool, logs, the munge socket) under FOLDER, and waits until `sinfo` shows the node
idle. `env()` is the environment that points Slurm's commands at it (SLURM_CONF). `stop()` cancels what
is still queued or running, then stops the three daemons (SIGTERM, SIGKILL after 10 s): use it as a
context manager so that a failing test stops them too. Nothing outside FOLDER is written.

`unavailable()` says why the cluster cannot start here (not root, Slurm or munge not installed), or None.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ["munged", "slurmctld", "slurmd"]
COMMANDS = ["sbatch", "salloc", "sinfo", "squeue", "scancel"]
INSTALL = "scripts/install_deps.sh installs Debian's slurmctld slurmd slurm-client munge"


def unavailable() -> str | None:
    """Why a one-node cluster cannot start on this machine, or None when it can."""
    missing = [tool for tool in DAEMONS + COMMANDS if not _which(tool)]
    if missing:
        return f"Slurm or munge not installed (no {', '.join(missing)}; {INSTALL})"
    if os.geteuid() != 0:
        return "not root: slurmd must run as root to start jobs (SlurmUser=root here)"
    return None


SLOTS = 8  # the CPUs the node offers (_write_conf says why not the machine's own count)


def _with_slots(node_line: str, cpus: int) -> str:
    """`slurmd -C`'s NodeName line with `cpus` CPUs: one socket of that many cores, one thread each."""
    words = [w for w in node_line.split()
             if w.split("=", 1)[0] not in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")]
    return " ".join(words[:1] + [f"CPUs={cpus}", "Boards=1", "SocketsPerBoard=1", f"CoresPerSocket={cpus}",
                                 "ThreadsPerCore=1"] + words[1:])


def _which(tool: str) -> str | None:
    # The daemons are in /usr/sbin, which a non-login PATH may lack.
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OneNodeSlurm:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.conf = self.folder / "slurm.conf"
        self.processes: list[tuple[str, subprocess.Popen]] = []

    def env(self) -> dict[str, str]:
        env = dict(os.environ, SLURM_CONF=str(self.conf))
        env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
        return env

    def __enter__(self) -> "OneNodeSlurm":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 60) -> None:
        for sub in ["state", "spool", "munge"]:
            (self.folder / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        socket_path = self._start_munged()
        node = self._write_conf(socket_path)
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-c", "-f", str(self.conf)])
        self._spawn("slurmd", [_which("slurmd"), "-D", "-N", node, "-f", str(self.conf)])
        self._wait_idle(node, timeout)

    def _start_munged(self) -> str:
        munge = self.folder / "munge"
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)  # munged refuses a key that others may read
        socket_path = str(munge / "munge.socket")
        self._spawn("munged", [_which("munged"), "--foreground", "--force", f"--key-file={key}",
                               f"--socket={socket_path}", f"--pid-file={munge / 'munged.pid'}",
                               f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}"])
        deadline = time.monotonic() + 10
        while not Path(socket_path).exists():
            self._check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"munged made no socket in 10 s; its log:\n{self._log('munged')}")
            time.sleep(0.05)
        return socket_path

    def _write_conf(self, socket_path: str) -> str:
        """slurm.conf for this machine; returns the node's name."""
        # `slurmd -C`: this machine's NodeName and RealMemory as slurmd sees them, so that slurmd does not
        # drain the node for a mismatch; its CPUs are replaced by SLOTS (config_overrides, below).
        hardware = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
        node_line = next(line for line in hardware.splitlines() if line.startswith("NodeName="))
        node = node_line.split()[0].split("=", 1)[1]
        node_line = _with_slots(node_line.split(" UpTime=")[0], SLOTS)
        d = self.folder
        self.conf.write_text(f"""# A one-node cluster for a test (scripts/tests/slurm_cluster.py).
ClusterName=lobenchtest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
# sbatch --wait looks at the job every 2 s only while MinJobAge / 2 (integer division) <= 2; with the
# default (300) it sleeps 2, 8, then 32 s between looks, which makes a 3-second job array take up to 40 s.
# A record must outlive one look (2 s) or sbatch --wait exits 0 without the job's exit code: 5 s.
MinJobAge=5
# The node offers SLOTS CPUs whatever the machine has (config_overrides: slurmd takes them as given):
# the docs' blocks are job arrays of tasks that mostly wait (start-up, Slurm's own latencies), so with one
# task per real core a 2-core machine ran an 8-task array in 4 waves, most of the test's time idle.
SlurmdParameters=config_overrides
{node_line} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP
""")
        return node

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.folder / f"{name}.out", "wb")
        with log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                       stdin=subprocess.DEVNULL)
        self.processes.append((name, process))

    def _check_alive(self) -> None:
        for name, process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with status {process.returncode}; its log:\n{self._log(name)}")

    def _log(self, name: str) -> str:
        text = ""
        for path in [self.folder / f"{name}.out", self.folder / f"{name}.log", self.folder / "munge" / f"{name}.log"]:
            if path.exists():
                text += path.read_text(errors="replace")[-3000:]
        return text

    def _wait_idle(self, node: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while True:
            self._check_alive()
            done = subprocess.run(["sinfo", "-h", "-N", "-n", node, "-o", "%t"], capture_output=True, text=True,
                                  env=self.env())
            state = (done.stdout + done.stderr).strip()
            if done.returncode == 0 and state == "idle":
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {node} not idle after {timeout:g} s (sinfo: {state!r}); slurmctld's log:\n"
                                   f"{self._log('slurmctld')}\nslurmd's log:\n{self._log('slurmd')}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Cancels every job of this cluster, then stops the daemons this object started (by their ids)."""
        if any(name == "slurmctld" and p.poll() is None for name, p in self.processes):
            subprocess.run(["scancel", "--user", "root"], env=self.env(), capture_output=True, timeout=30)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                done = subprocess.run(["squeue", "-h"], env=self.env(), capture_output=True, text=True, timeout=30)
                if done.returncode != 0 or not done.stdout.strip():
                    break
                time.sleep(0.5)
        for name, process in reversed(self.processes):  # slurmd, slurmctld, then munged
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
