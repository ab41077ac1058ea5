"""mkzip.py LIB OUT writes the Python guest's standard library: a stored
(uncompressed) zip of sourceless .pyc files compiled from the .py files under
LIB (CPython's Lib/), for the guest to import through zipimport.

It is run by the native build Python of the same version (guest/python/build.sh),
so the bytecode's magic number is the guest's. The zip is stored because the
guest has no zlib; its .pyc files are unchecked hash-based ones (PEP 552), so
zipimport never looks for a source; every entry's time is 1980-01-01. (The
bytes can still differ by a few from one run to the next: marshal writes
back-references depending on reference counts.)

Left out: what the guest cannot run on WASI (GUIs, terminals, ctypes,
sqlite3, dbm, multiprocessing, servers), the interactive tools, and the test
suites.
"""

import importlib._bootstrap_external as bootstrap
import importlib.util
import os
import sys
import zipfile

# Top-level packages and modules of Lib/ that are left out.
EXCLUDED_TOP = {
    "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "venv", "sqlite3",
    "ctypes", "curses", "dbm", "multiprocessing", "xmlrpc", "wsgiref", "pydoc_data",
    "_pyrepl", "__phello__", "site-packages", "lib2to3", "distutils",
    "turtle", "pydoc", "antigravity", "this", "webbrowser",
    # Their C modules are not in the guest (no bzip2, lzma, zlib or OpenSSL
    # in the WASI sysroot), so importing them could only fail.
    "bz2", "lzma", "gzip", "ssl",
    # Network clients and servers: the guest cannot create sockets.
    "socketserver", "ftplib", "smtplib", "imaplib", "poplib",
    # Other platforms' support modules.
    "_osx_support", "_aix_support", "_ios_support", "_android_support",
}
# Directories left out wherever they are (the packages' own test suites).
EXCLUDED_DIRS = {"test", "tests", "idle_test", "__pycache__"}

# Where the guest sees the zip: tracebacks name the modules' files under it.
GUEST_ZIP = "/usr/local/lib/python313.zip"


def entries(lib):
    """Yields (name in the zip, path of the .py) in a fixed order."""
    for dirpath, dirnames, filenames in os.walk(lib):
        rel = os.path.relpath(dirpath, lib)
        parts = [] if rel == "." else rel.split(os.sep)
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in EXCLUDED_DIRS and not (not parts and d in EXCLUDED_TOP)
        )
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            if not parts and f[:-3] in EXCLUDED_TOP:
                continue
            yield "/".join(parts + [f]), os.path.join(dirpath, f)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mkzip.py LIB OUT")
    lib, out = sys.argv[1:]
    count = 0
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        for name, path in entries(lib):
            with open(path, "rb") as f:
                source = f.read()
            try:
                code = compile(source, GUEST_ZIP + "/" + name, "exec", dont_inherit=True, optimize=0)
            except SyntaxError as e:
                sys.exit("mkzip.py: %s does not compile: %s" % (path, e))
            pyc = bootstrap._code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False)
            info = zipfile.ZipInfo(name + "c", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            z.writestr(info, pyc)
            count += 1
    print("mkzip.py: %d modules in %s" % (count, out), file=sys.stderr)


if __name__ == "__main__":
    main()
