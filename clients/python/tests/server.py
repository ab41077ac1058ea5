"""A real ``ptcx serve`` for the tests: the binary named by PTCX_BIN, else
one built with ``go build`` from this repository into a temporary directory;
a config of two tenants on a loopback port the server picks."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
KEYS = {"alpha": "alpha-key", "beta": "beta-key"}


class Server:
    """Started by start(), stopped (SIGTERM, then SIGKILL after 10 s) by stop()."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        # tools, when given, are the server-side tools of a tools file.
        self.tools = tools
        self.dir = Path(tempfile.mkdtemp(prefix="ptcx-python-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def binary(self) -> str:
        if os.environ.get("PTCX_BIN"):
            return os.environ["PTCX_BIN"]
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("neither PTCX_BIN nor the go command: cannot have a ptcx binary to test against")
        out = self.dir / "ptcx"
        subprocess.run([go, "build", "-o", str(out), "./cmd/ptcx"], cwd=ROOT, check=True)
        return str(out)

    def start(self) -> None:
        (self.dir / "work").mkdir()
        tenants = [
            # alpha: room enough for the tests.
            {"name": "alpha", "key_sha256": sha(KEYS["alpha"]), "mode": "ptc",
             "quotas": {"max_concurrent": 4, "max_pending": 8}, "languages": ["typescript", "python"]},
            # beta: one run at a time, for the quota (429) tests.
            {"name": "beta", "key_sha256": sha(KEYS["beta"]), "mode": "ptc",
             "quotas": {"max_concurrent": 1, "max_pending": 2}},
        ]
        config = {"listen": "127.0.0.1:0", "workspace": str(self.dir / "work"), "spill_dir": str(self.dir / "spill"),
                  "server": {"max_wait_ms": 10000}, "tenants": tenants}
        if self.tools is not None:
            (self.dir / "tools.json").write_text(json.dumps({"tools": self.tools}))
            config["tools"] = str(self.dir / "tools.json")
        (self.dir / "serve.json").write_text(json.dumps(config))
        with open(self.dir / "log", "wb") as log:
            self.proc = subprocess.Popen([self.binary(), "serve", "--config", str(self.dir / "serve.json")],
                                         stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = re.search(r'"msg":"serving","addr":"([^"]+)"', (self.dir / "log").read_text())
            if m:
                self.url = "http://" + m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("ptcx serve did not start within 30 s:\n" + (self.dir / "log").read_text())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
