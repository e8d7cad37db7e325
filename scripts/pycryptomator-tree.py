"""Copies a folder into a new vault or a vault there is, or a vault out to a folder, through
pycryptomator's API.

Run by scripts/pycryptomator (make, put, dump), which says more. The passphrase is in the
environment (PYCRYPTOMATOR_PASSPHRASE).
"""

import io
import os
import sys

import pycryptomator
from pycryptomator import cryptomator


def fail(message):
    print(f"scripts/pycryptomator: {message}", file=sys.stderr)
    sys.exit(1)


def make(vault, source):
    os.makedirs(vault, exist_ok=True)
    # init_vault prints what it does: keep stdout for nothing.
    with io.StringIO() as chatter:
        previous, sys.stdout = sys.stdout, chatter
        try:
            cryptomator.init_vault(vault, os.environ["PYCRYPTOMATOR_PASSPHRASE"])
        finally:
            sys.stdout = previous
    put(vault, source)


def put(vault, source):
    """Every file and folder of source into the vault (made or not), a file there replaced."""
    opened = cryptomator.Vault(vault, os.environ["PYCRYPTOMATOR_PASSPHRASE"])
    for folder, folders, files in os.walk(source):
        relative = os.path.relpath(folder, source)
        inside = "/" if relative == "." else "/" + relative.replace(os.sep, "/")
        for name in sorted(folders):
            opened.mkdir(inside.rstrip("/") + "/" + name)
        for name in sorted(files):
            with open(os.path.join(folder, name), "rb") as plain:
                opened.encryptFile(plain, inside.rstrip("/") + "/" + name, force=True)


def dump(vault, out):
    opened = cryptomator.Vault(vault, os.environ["PYCRYPTOMATOR_PASSPHRASE"])
    # decryptName prints and skips a name it cannot decrypt: caught here as a failure.
    captured = io.StringIO()
    previous, sys.stdout = sys.stdout, captured
    try:
        walked = list(opened.walk("/"))
    finally:
        sys.stdout = previous
    if captured.getvalue():
        fail(f"pycryptomator's walk reported: {captured.getvalue().strip()}")
    os.makedirs(out, exist_ok=True)
    for folder, folders, files in walked:
        target = os.path.join(out, folder.lstrip("/"))
        os.makedirs(target, exist_ok=True)
        for name in folders:
            os.makedirs(os.path.join(target, name), exist_ok=True)
        for name in files:
            with open(os.path.join(target, name), "wb") as plain:
                decrypt(opened, folder.rstrip("/") + "/" + name, plain)


def decrypt(opened, path, plain):
    """The file's plaintext through pycryptomator, which only warns of a chunk that does not
    authenticate: here that fails."""
    info = opened.getInfo(path)
    captured = io.StringIO()
    previous, sys.stdout = sys.stdout, captured
    try:
        with open(info.contentsC9, "rb") as encrypted:
            cryptomator.Vault._decryptf(opened.pk, encrypted, plain)
    finally:
        sys.stdout = previous
    if captured.getvalue():
        fail(f"{path}: {captured.getvalue().strip()}")


def main():
    commands = {"make": make, "put": put, "dump": dump}
    if len(sys.argv) != 4 or sys.argv[1] not in commands:
        fail("usage: pycryptomator-tree.py make VAULT SOURCE | put VAULT SOURCE | dump VAULT OUT")
    try:
        commands[sys.argv[1]](sys.argv[2], sys.argv[3])
    except BaseException as error:  # pycryptomator raises BaseException for everything
        if isinstance(error, SystemExit):
            raise
        fail(f"{sys.argv[1]} {sys.argv[2]}: {error!r} (pycryptomator {pycryptomator.__version__})")


if __name__ == "__main__":
    main()
