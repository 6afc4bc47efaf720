"""git run in a throwaway view history (e2g.git.tokenview), whose objects are all
e2g's own: one command, or several at once (git blames on one core), given
their input; a failure is a RepoError naming the command."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from e2g.errors import RepoError
from e2g.git.objects import git_environment


def view_git(git_dir: Path | None, arguments: Sequence[str]) -> bytes:
    """git in the throwaway repository, whose objects are all ours."""
    return view_git_at_once(git_dir, [arguments])[0]


def view_git_at_once(
    git_dir: Path | None,
    commands: Sequence[Sequence[str]],
    inputs: Sequence[bytes] | None = None,
) -> list[bytes]:
    """Several gits in the throwaway repository at once (each given its `inputs`
    item on its standard input); each one's output. Each is read in a thread of
    its own: a git that writes as it goes (`log -p`) would otherwise wait on a
    full pipe until the one before it ended."""
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    environment = git_environment()
    try:
        processes = [
            subprocess.Popen(
                ["git", *where, "-c", "core.quotePath=true", *arguments],
                stdin=subprocess.PIPE if inputs is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=environment,
            )
            for arguments in commands
        ]
    except FileNotFoundError as error:
        raise RepoError("git not found on PATH") from error
    given = list(inputs) if inputs is not None else [None] * len(processes)
    if len(processes) == 1:
        outputs = [processes[0].communicate(given[0])]
    else:
        with ThreadPoolExecutor(max_workers=len(processes)) as pool:
            outputs = list(
                pool.map(
                    lambda item: item[0].communicate(item[1]),
                    zip(processes, given, strict=True),
                )
            )
    for arguments, process, (_, said) in zip(commands, processes, outputs, strict=True):
        if process.returncode != 0:
            detail = said.decode("utf-8", "replace").strip().splitlines()
            name = next(word for word in arguments if not word.startswith("-"))
            raise RepoError(
                f"git {name} failed in the token history: {detail[-1] if detail else process.returncode}"
            )
    return [output for output, _ in outputs]
