"""Settings, resolved once per command.

The data directory is, in order: the `--data-dir` flag, `E2G_DATA_DIR`,
`$XDG_DATA_HOME/e2g`, then `~/.local/share/e2g`. An optional TOML file at
`$XDG_CONFIG_HOME/e2g/config.toml` (default `~/.config/e2g/config.toml`) may set
`data_dir`, `index_bodies`, a `url` template for every list, per-list ones, and
subjects `e2g audit` exempts (`[audit] exempt = ["regex", ...]`), the robots whose
replies `e2g metrics` does not count (`[metrics] bots = ["lkp@intel.com", ...]`,
shell patterns; the default is DEFAULT_BOTS) and the token cache's bound
(`[tokens] cache_bytes = "2G"`):

    [lists."io-uring.vger.kernel.org"]
    url = "https://lore.kernel.org/io-uring/{message_id}/"

A message links to a list archive only where one is known: its list's template, the
`url` template, or lore.kernel.org for the lists lore carries whole (every vger and
lists.linux.dev list). Other lists (a project's own, an old pipermail list) get no
link rather than a lore link that leads nowhere.

This is the only module that reads the environment or the home directory; everything
below receives a Settings value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from e2g.errors import UsageError

LORE_URL_TEMPLATE = "https://lore.kernel.org/r/{message_id}"
LORE_LISTS = (".vger.kernel.org", ".lists.linux.dev")  # list ids lore carries end so
# The robots that answer patches on the kernel's lists: the 0-day robot, syzbot,
# patchwork's "applied" bot, the kernel CI and the stable team's scripts.
DEFAULT_BOTS = (
    "lkp@intel.com",
    "syzbot*@syzkaller.appspotmail.com",
    "patchwork-bot*@kernel.org",
    "bot@kernelci.org",
    "*-bot@*",
    "noreply@*",
)
TOKEN_CACHE_BYTES = 1 << 30
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class Settings(NamedTuple):
    data_dir: Path
    index_bodies: bool = False
    url_templates: Mapping[str, str] = {}  # read only: one empty default serves all
    default_url_template: str | None = None  # the config file's `url`
    # `[audit] exempt`: subjects (regular expressions) `e2g audit` does not judge.
    audit_exempt: tuple[str, ...] = ()
    # `[trees.NAME]`: named trees (repository and branches), in the file's order.
    trees: tuple[TreeConfig, ...] = ()
    # `[queue] quiet_days`: how long a patch no version of which was applied stays
    # quiet before the queue calls it not-applied (e2g.api.queue.states).
    queue_quiet_days: int = 90
    # `[metrics] bots`: addresses (shell patterns, case-blind) whose replies are no
    # response (e2g.api.metrics: first-response, ignored, reviewer-load).
    metrics_bots: tuple[str, ...] = DEFAULT_BOTS
    # `[tokens] cache_bytes`: the bound of the token histories' cache (data dir's
    # `tokens/`); a warmed tree's files count but are never evicted.
    token_cache_bytes: int = TOKEN_CACHE_BYTES

    @property
    def store_path(self) -> Path:
        return self.data_dir / "store.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "fulltext"

    def url_for(self, message_id: str, list_name: str | None) -> str | None:
        """The list archive's page for a message, or None where none is known."""
        from urllib.parse import quote

        template = self.url_templates.get(list_name or "") or self.default_url_template
        if template is None and list_name and list_name.endswith(LORE_LISTS):
            template = LORE_URL_TEMPLATE
        if template is None:
            return None
        return template.format(message_id=quote(message_id, safe="@!$&'()*+,;=:~-._"))


def _config_file(env: Mapping[str, str], home: Path) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(base) / "e2g" / "config.toml"


def _read_config(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    import tomllib  # here: most starts have no config file to parse

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"cannot read config file {path}: {err}") from None


def _url_templates(config: Mapping[str, object]) -> dict[str, str]:
    lists = config.get("lists", {})
    templates: dict[str, str] = {}
    if isinstance(lists, dict):
        for name, entry in lists.items():
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                templates[str(name)] = entry["url"]
    return templates


def _audit_exempt(config: Mapping[str, object]) -> tuple[str, ...]:
    section = config.get("audit", {})
    found = section.get("exempt", []) if isinstance(section, dict) else []
    if not isinstance(found, list) or not all(isinstance(x, str) for x in found):
        raise UsageError("config: [audit] exempt must be a list of regular expressions")
    return tuple(found)


def _quiet_days(config: Mapping[str, object]) -> int:
    section = config.get("queue", {})
    found = section.get("quiet_days", 90) if isinstance(section, dict) else 90
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise UsageError("config: [queue] quiet_days must be a whole number of days")
    return found


def _bots(config: Mapping[str, object]) -> tuple[str, ...]:
    section = config.get("metrics", {})
    found = section.get("bots", DEFAULT_BOTS) if isinstance(section, dict) else None
    if not isinstance(found, list | tuple) or not all(
        isinstance(x, str) for x in found
    ):
        raise UsageError("config: [metrics] bots must be a list of addresses")
    return tuple(address.lower() for address in found)


def parse_size(text: str) -> int:
    """`1073741824`, `512M`, `2G` or `1.5G` (binary units) as bytes; UsageError
    for anything else."""
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = cleaned[-1:] if cleaned[-1:] in _SIZE_UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not number or value < 0:
        raise UsageError(f"bad size {text!r}: give bytes, or a number with K, M or G")
    return int(value * _SIZE_UNITS[unit])


def _token_cache_bytes(config: Mapping[str, object]) -> int:
    section = config.get("tokens", {})
    found = section.get("cache_bytes") if isinstance(section, dict) else None
    if found is None:
        return TOKEN_CACHE_BYTES
    if isinstance(found, int) and not isinstance(found, bool) and found >= 0:
        return found
    if isinstance(found, str):
        return parse_size(found)
    raise UsageError('config: [tokens] cache_bytes must be a size (2147483648 or "2G")')


class TreeConfig(NamedTuple):
    """`[trees.NAME] repo = "PATH", branches = ["linux-6.1.y", "v6.1..linux-6.1.y"]`:
    a named tree. A branch may be a range; its name is what follows the last "..".
    Trees listed first are upstream of those listed after them."""

    name: str
    repo: Path
    branches: tuple[str, ...]


def _trees(config: Mapping[str, object]) -> tuple[TreeConfig, ...]:
    section = config.get("trees", {})
    if not isinstance(section, dict):
        raise UsageError("config: [trees] must be a table of named trees")
    found = []
    for name, tree in section.items():
        repo = tree.get("repo") if isinstance(tree, dict) else None
        branches = tree.get("branches", ["HEAD"]) if isinstance(tree, dict) else None
        if not isinstance(repo, str) or not isinstance(branches, list):
            raise UsageError(
                f'config: [trees.{name}] needs repo = "PATH" and branches = [...]'
            )
        found.append(
            TreeConfig(str(name), Path(repo).expanduser(), tuple(map(str, branches)))
        )
    return tuple(found)


def resolve(
    *,
    data_dir: Path | None = None,
    index_bodies: bool | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Settings:
    """Build Settings from flags, then environment, then config file, then defaults."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    config = _read_config(_config_file(env, home))
    if data_dir is None and env.get("E2G_DATA_DIR"):
        data_dir = Path(env["E2G_DATA_DIR"])
    if data_dir is None and isinstance(config.get("data_dir"), str):
        data_dir = Path(str(config["data_dir"])).expanduser()
    if data_dir is None:
        xdg = env.get("XDG_DATA_HOME")
        data_dir = (Path(xdg) if xdg else home / ".local" / "share") / "e2g"
    if index_bodies is None:
        index_bodies = bool(config.get("index_bodies", False))
    default_url = config.get("url")
    return Settings(
        data_dir=data_dir,
        index_bodies=index_bodies,
        url_templates=_url_templates(config),
        default_url_template=default_url if isinstance(default_url, str) else None,
        audit_exempt=_audit_exempt(config),
        trees=_trees(config),
        queue_quiet_days=_quiet_days(config),
        metrics_bots=_bots(config),
        token_cache_bytes=_token_cache_bytes(config),
    )
