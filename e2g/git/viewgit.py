"""git run in a throwaway view history (e2g.git.tokenview), whose objects are all
e2g's own: one command, one with input, or several at once (git blames on one
core); a failure is a RepoError naming the command."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from e2g.errors import RepoError


def view_git(git_dir: Path | None, arguments: Sequence[str]) -> bytes:
    """git in the throwaway repository, whose objects are all ours."""
    return view_git_at_once(git_dir, [arguments])[0]


def view_git_input(git_dir: Path, arguments: Sequence[str], data: bytes) -> bytes:
    """git in the throwaway repository, `data` on its standard input."""
    try:
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "-c", "core.quotePath=true", *arguments],
            input=data,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError as error:
        raise RepoError("git not found on PATH") from error
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RepoError(
            f"git {arguments[0]} failed in the token history: {detail[-1] if detail else done.returncode}"
        )
    return done.stdout


def view_git_at_once(
    git_dir: Path | None, commands: Sequence[Sequence[str]]
) -> list[bytes]:
    """Several gits in the throwaway repository at once; each one's output."""
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    try:
        processes = [
            subprocess.Popen(
                ["git", *where, "-c", "core.quotePath=true", *arguments],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for arguments in commands
        ]
    except FileNotFoundError as error:
        raise RepoError("git not found on PATH") from error
    outputs = [process.communicate() for process in processes]
    for arguments, process, (_, said) in zip(commands, processes, outputs, strict=True):
        if process.returncode != 0:
            detail = said.decode("utf-8", "replace").strip().splitlines()
            name = next(word for word in arguments if not word.startswith("-"))
            raise RepoError(
                f"git {name} failed in the token history: {detail[-1] if detail else process.returncode}"
            )
    return [output for output, _ in outputs]
